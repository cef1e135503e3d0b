#include "autotune/results.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>

#include "apps/driver/json.h"

namespace convbwd::tune {

double Row::num(const std::string &k) const {
    auto it = f.find(k);
    if (it == f.end() || it->second.empty()) return NAN;
    char *end = nullptr;
    double v = std::strtod(it->second.c_str(), &end);
    return end && *end == 0 ? v : NAN;
}

const std::vector<std::string> &numeric_fields() {
    static const std::vector<std::string> k = {"round", "index", "time_ms", "peer_ms", "seed", "max_error", "build_s", "regs", "spill_stores", "spill_loads", "stack_bytes"};
    return k;
}

bool parse_row(const std::string &line, Row *out) {
    size_t i = 0;
    auto ws = [&] {
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) i++;
    };
    auto str = [&](std::string *s) {
        if (i >= line.size() || line[i] != '"') return false;
        i++;
        s->clear();
        while (i < line.size() && line[i] != '"') {
            char c = line[i++];
            if (c == '\\') {
                if (i >= line.size()) return false;
                char e = line[i++];
                switch (e) {
                case 'n': c = '\n'; break;
                case 't': c = '\t'; break;
                case 'r': c = '\r'; break;
                case 'b': c = '\b'; break;
                case 'f': c = '\f'; break;
                case 'u':
                    if (i + 4 > line.size()) return false;
                    c = (char)std::strtol(line.substr(i, 4).c_str(), nullptr, 16);
                    i += 4;
                    break;
                default: c = e;
                }
            }
            *s += c;
        }
        if (i >= line.size()) return false;
        i++;
        return true;
    };
    Row r;
    ws();
    if (i >= line.size() || line[i] != '{') return false;
    i++;
    ws();
    if (i < line.size() && line[i] == '}') return (*out = r, true);
    for (;;) {
        ws();
        std::string k, v;
        if (!str(&k)) return false;
        ws();
        if (i >= line.size() || line[i] != ':') return false;
        i++;
        ws();
        if (i < line.size() && line[i] == '"') {
            if (!str(&v)) return false;
        } else {
            size_t j = i;
            while (j < line.size() && line[j] != ',' && line[j] != '}' && line[j] != ' ') j++;
            v = line.substr(i, j - i);
            if (v.empty()) return false;
            if (v == "null") v.clear();
            i = j;
        }
        r.f[k] = v;
        ws();
        if (i < line.size() && line[i] == ',') {
            i++;
            continue;
        }
        if (i < line.size() && line[i] == '}') break;
        return false;
    }
    *out = std::move(r);
    return true;
}

std::string to_json(const Row &r, const std::vector<std::string> &numeric_keys) {
    driver::JsonObject o;
    for (const auto &[k, v] : r.f) {
        const bool numeric = std::find(numeric_keys.begin(), numeric_keys.end(), k) != numeric_keys.end();
        if (numeric) {
            char *end = nullptr;
            const double d = v.empty() ? NAN : std::strtod(v.c_str(), &end);
            if (v.empty() || !end || *end) o.null(k);
            else o.raw(k, v);
            (void)d;
        } else {
            o.str(k, v);
        }
    }
    return o.text();
}

namespace {
std::vector<std::string> jsonl_files(const std::string &dir) {
    std::vector<std::string> out;
    if (DIR *d = opendir(dir.c_str())) {
        while (dirent *e = readdir(d)) {
            std::string n = e->d_name;
            if (n.size() > 6 && n.compare(n.size() - 6, 6, ".jsonl") == 0) out.push_back(dir + "/" + n);
        }
        closedir(d);
    }
    std::sort(out.begin(), out.end());
    return out;
}
void read_rows(const std::string &file, std::vector<Row> *rows) {
    std::ifstream in(file);
    for (std::string line; std::getline(in, line);) {
        Row r;
        if (parse_row(line, &r)) rows->push_back(std::move(r));  // a torn last line is dropped
    }
}
}  // namespace

bool make_dirs(const std::string &path) {
    for (size_t at = path.find('/', 1);; at = path.find('/', at + 1)) {
        const std::string part = path.substr(0, at);
        if (!part.empty() && ::mkdir(part.c_str(), 0755) != 0 && errno != EEXIST) return false;
        if (at == std::string::npos) return true;
    }
}

bool ResultsDb::open(const std::string &dir, const std::string &file, bool resume, std::string *error) {
    make_dirs(dir);
    path_ = dir + "/" + file;
    if (resume) {
        for (const std::string &f : jsonl_files(dir)) read_rows(f, &rows_);
        for (size_t i = 0; i < rows_.size(); i++) index_.emplace(rows_[i].key(), i);
    } else if (!jsonl_files(dir).empty()) {
        *error = dir + " already holds results (*.jsonl): pass --resume to continue them, or another --results";
        return false;
    }
    // A torn line from a killed run ends without a newline: start on a fresh line.
    bool needs_newline = false;
    if (FILE *f = std::fopen(path_.c_str(), "rb")) {
        if (std::fseek(f, -1, SEEK_END) == 0) needs_newline = std::fgetc(f) != '\n';
        std::fclose(f);
    }
    out_ = std::fopen(path_.c_str(), "ab");
    if (!out_) {
        *error = path_ + ": cannot be opened for appending";
        return false;
    }
    if (needs_newline) std::fputc('\n', out_);
    return true;
}

bool ResultsDb::append(const Row &r, std::string *error) {
    const std::string line = to_json(r, numeric_fields()) + "\n";
    if (std::fwrite(line.data(), 1, line.size(), out_) != line.size() || std::fflush(out_) != 0 || fsync(fileno(out_)) != 0) {
        *error = path_ + ": write failed";
        return false;
    }
    index_[r.key()] = rows_.size();
    rows_.push_back(r);
    return true;
}

ResultsDb::~ResultsDb() {
    if (out_) std::fclose(out_);
}

long merge_results(const std::vector<std::string> &dirs, const std::string &out_file, std::string *error) {
    std::map<std::string, Row> by_key;
    for (const std::string &d : dirs) {
        std::vector<Row> rows;
        for (const std::string &f : jsonl_files(d)) read_rows(f, &rows);
        for (Row &r : rows) by_key.emplace(r.key(), std::move(r));  // the first of equal keys wins
    }
    std::ofstream out(out_file);
    for (auto &[k, r] : by_key) {
        Row w = r;
        w.f.erase("shard");  // where it ran is not part of the result
        out << to_json(w, numeric_fields()) << "\n";
    }
    if (!out) {
        *error = out_file + ": cannot be written";
        return -1;
    }
    return (long)by_key.size();
}

}  // namespace convbwd::tune
