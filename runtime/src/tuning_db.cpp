// Tuning databases, as MIOpen's find-db: text, one record a line,
//   <problem_key> <kernel name> [launch-time knob=value ...]      # comment
// consulted before the kernel list's order. The user's database (convbwd_load_tuning_db,
// CONVBWD_TUNING_DB at first use, convbwd-driver --tuning-db) comes before the default one
// compiled in (schedules/tuning.db). Records are checked for form when loaded (a malformed file
// is refused whole, naming the file, line and field); whether a record's kernel is built, can take
// the problem and accepts its knobs is checked at dispatch, where a record that cannot be used is
// skipped with its reason (CONVBWD_VERBOSE=dispatch). A line "module FILE" loads a kernel module
// (the kernels a tuning run built) when the database is loaded.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include "internal.h"

namespace convbwd {
namespace {

const char kDefaultDbText[] =
#include "default_tuning_db.inc"
    ;

struct Db {
    std::string path;
    std::unordered_map<std::string, std::vector<TuningRecord>> by_key;
};

std::shared_ptr<const Db> make_db(std::vector<TuningRecord> records, std::string path) {
    auto db = std::make_shared<Db>();
    db->path = std::move(path);
    for (TuningRecord &r : records) db->by_key[r.key].push_back(std::move(r));
    return db;
}

std::mutex g_mutex;
std::shared_ptr<const Db> g_user;     // guarded by g_mutex
uint64_t g_generation = 0;            // guarded by g_mutex: each load (or reset) of g_user adds one
bool g_env_checked = false;           // guarded by g_mutex

const Db &default_db() {
    static const std::shared_ptr<const Db> db = [] {
        std::vector<TuningRecord> records;
        if (std::string e = parse_tuning_db(kDefaultDbText, "schedules/tuning.db", &records); !e.empty()) {
            std::fprintf(stderr, "convbwd: the default tuning database is malformed (a build bug): %s\n", e.c_str());
            records.clear();
        }
        return make_db(std::move(records), "schedules/tuning.db");
    }();
    return *db;
}

bool is_name_char(char c) { return std::isalnum((unsigned char)c) || c == '_'; }

// <dir>-<dtype>-<layout>-<device>-n..-c..-h..-w..-k..-p..-q..-r..-s..-g..-pad..-u..-l.. (problem_key()).
std::string check_key(const std::string &key) {
    static const char *const kPrefix[] = {"n", "c", "h", "w", "k", "p", "q", "r", "s", "g", "pad", "u", "l"};
    std::vector<std::string> f;
    std::stringstream ss(key);
    for (std::string t; std::getline(ss, t, '-');) f.push_back(t);
    if (f.size() < 17) return "'" + key + "' has " + std::to_string(f.size()) + " '-'-separated fields, a problem key has 17";
    if (f[0] != "bwd_data" && f[0] != "bwd_weight") return "direction '" + f[0] + "' is not bwd_data|bwd_weight";
    if (f[1] != "f32" && f[1] != "f16" && f[1] != "bf16") return "dtype '" + f[1] + "' is not f32|f16|bf16";
    if (f[2] != "nchw" && f[2] != "nhwc") return "layout '" + f[2] + "' is not nchw|nhwc";
    if (f[3] != "host" && f[3] != "cuda" && f[3] != "opencl" && f[3] != "amdgpu")
        return "device '" + f[3] + "' is not host|cuda|opencl|amdgpu";
    for (size_t i = 0; i < 13; i++) {
        const std::string &t = f[4 + i];
        const size_t n = std::strlen(kPrefix[i]);
        if (t.compare(0, n, kPrefix[i]) != 0 || t.size() == n ||
            t.find_first_not_of("0123456789,", n) != std::string::npos)
            return "field '" + t + "' is not " + kPrefix[i] + "<integers>";
    }
    return {};
}

}  // namespace

std::string parse_tuning_db(const std::string &text, const std::string &where, std::vector<TuningRecord> *out,
                            std::vector<TuningModule> *modules) {
    std::istringstream in(text);
    int lineno = 0;
    std::vector<TuningRecord> records;
    std::vector<TuningModule> mods;
    for (std::string line; std::getline(in, line);) {
        ++lineno;
        if (size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
        std::istringstream fields(line);
        std::vector<std::string> f;
        for (std::string t; fields >> t;) f.push_back(t);
        if (f.empty()) continue;
        const std::string at = where + ":" + std::to_string(lineno);
        if (f[0] == "module") {  // "module FILE": a kernel module the records below may name
            if (f.size() != 2) return at + ": module: expected 'module <file>' (one path, no spaces)";
            mods.push_back({f[1], at});
            continue;
        }
        if (f.size() < 2) return at + ": kernel: missing (a record is <problem_key> <kernel name> [knob=value ...])";
        if (std::string e = check_key(f[0]); !e.empty()) return at + ": problem_key: " + e;
        const std::string &name = f[1];
        if ((name.rfind("bwdd_", 0) != 0 && name.rfind("bwdw_", 0) != 0) ||
            !std::all_of(name.begin(), name.end(), is_name_char))
            return at + ": kernel: '" + name + "' is not a kernel name (bwdd_... or bwdw_..., letters, digits and _)";
        TuningRecord r{f[0], name, "", at};
        for (size_t i = 2; i < f.size(); i++) {
            const std::string &kv = f[i];
            const size_t eq = kv.find('=');
            if (eq == std::string::npos || eq == 0 || !std::all_of(kv.begin(), kv.begin() + eq, is_name_char) ||
                eq + 1 == kv.size() || kv.find_first_not_of("0123456789", eq + 1) != std::string::npos)
                return at + ": knob: '" + kv + "' is not knob=<non-negative integer>";
            r.launch += (r.launch.empty() ? "" : " ") + kv;
        }
        records.push_back(std::move(r));
    }
    *out = std::move(records);
    if (modules) *modules = std::move(mods);
    return {};
}

namespace {
// Parses a database file and loads the kernel modules it names (paths relative to its folder).
// "" or the error naming the file, line and field.
std::string read_db(const std::string &path, std::vector<TuningRecord> *records) {
    std::ifstream f(path);
    if (!f) return path + ": cannot be read";
    // Read in blocks (not `ss << f.rdbuf()`, which swallows an allocation failure and leaves a
    // partial text): std::bad_alloc reaches the C API's guard as CONVBWD_ALLOC_FAILED.
    std::string text;
    char block[4096];
    while (f.read(block, sizeof block) || f.gcount() > 0) text.append(block, (size_t)f.gcount());
    if (f.bad()) return path + ": cannot be read";
    std::vector<TuningModule> modules;
    if (std::string e = parse_tuning_db(text, path, records, &modules); !e.empty()) return e;
    const size_t slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
    for (const TuningModule &m : modules) {
        const std::string file = m.path[0] == '/' ? m.path : dir + m.path;
        if (Status s = load_kernel_module(file, nullptr); !s.ok()) return m.where + ": module: " + s.message;
    }
    return {};
}
}  // namespace

Status load_tuning_db(const char *path) {
    if (!path || !*path) {
        std::lock_guard<std::mutex> lock(g_mutex);
        g_user.reset();
        g_generation++;
        g_env_checked = true;  // an explicit call wins over the environment
        return {};
    }
    std::vector<TuningRecord> records;
    if (std::string e = read_db(path, &records); !e.empty()) return fail(CONVBWD_BAD_PARAM, "tuning database " + e);
    auto db = make_db(std::move(records), path);
    std::lock_guard<std::mutex> lock(g_mutex);
    g_user = std::move(db);
    g_generation++;
    g_env_checked = true;
    return {};
}

namespace {
// CONVBWD_TUNING_DB, read at first use (g_mutex held).
void check_env_locked() {
    if (g_env_checked) return;
    g_env_checked = true;
    if (const char *env = std::getenv("CONVBWD_TUNING_DB"); env && *env) {
        std::vector<TuningRecord> records;
        std::string e = read_db(env, &records);
        if (e.empty()) {
            g_user = make_db(std::move(records), env);
            g_generation++;
        } else {  // no call to return it from: say it once, and use the defaults
            std::fprintf(stderr, "convbwd: CONVBWD_TUNING_DB ignored: %s\n", e.c_str());
        }
    }
}
}  // namespace

uint64_t tuning_db_generation() {
    std::lock_guard<std::mutex> lock(g_mutex);
    check_env_locked();
    return g_generation;
}

std::vector<TuningRecord> tuning_records(const std::string &key) {
    std::shared_ptr<const Db> user;
    {
        std::lock_guard<std::mutex> lock(g_mutex);
        check_env_locked();
        user = g_user;
    }
    std::vector<TuningRecord> out;
    for (const Db *db : {user.get(), &default_db()}) {
        if (!db) continue;
        if (auto it = db->by_key.find(key); it != db->by_key.end()) out.insert(out.end(), it->second.begin(), it->second.end());
    }
    return out;
}

}  // namespace convbwd
