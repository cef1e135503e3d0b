// One JSON object per line (the driver's --json rows): strings escaped per RFC 8259,
// non-finite numbers written as null.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

namespace convbwd::driver {

inline std::string json_escape(const std::string &s) {
    std::string out;
    for (unsigned char c : s) {
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
            if (c < 0x20 || c == 0x7f) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", c);
                out += buf;
            } else {
                out += (char)c;
            }
        }
    }
    return out;
}

class JsonObject {
public:
    JsonObject &str(const std::string &key, const std::string &v) { return raw(key, "\"" + json_escape(v) + "\""); }
    JsonObject &num(const std::string &key, double v) {
        if (!std::isfinite(v)) return null(key);
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.9g", v);
        return raw(key, buf);
    }
    JsonObject &integer(const std::string &key, int64_t v) { return raw(key, std::to_string(v)); }
    JsonObject &boolean(const std::string &key, bool v) { return raw(key, v ? "true" : "false"); }
    JsonObject &null(const std::string &key) { return raw(key, "null"); }
    JsonObject &object(const std::string &key, const JsonObject &v) { return raw(key, v.text()); }
    std::string text() const { return "{" + body_ + "}"; }
    JsonObject &raw(const std::string &key, const std::string &v) {
        body_ += (body_.empty() ? "\"" : ", \"") + json_escape(key) + "\": " + v;
        return *this;
    }
    std::string body_;
};

}  // namespace convbwd::driver
