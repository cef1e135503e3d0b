// The results database of a tuning run: append-only JSON lines in --results DIR, one row per
// finished unit of work (a module built or failed, a candidate verified and timed on a problem,
// the library's default on a problem with the peer). A row is written whole and flushed before
// the next unit starts, so a killed run loses nothing it had finished; --resume reads every
// *.jsonl of the folder (shards' files too) and runs nothing that has a row.
#pragma once

#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace convbwd::tune {

// One flat JSON object: keys to values as written (strings unescaped, numbers as text, null as "").
struct Row {
    std::map<std::string, std::string> f;
    std::string get(const std::string &k) const {
        auto it = f.find(k);
        return it == f.end() ? "" : it->second;
    }
    double num(const std::string &k) const;  // NaN when absent or null
    // The unit of work this row finishes: "<kind>|<candidate>|<problem_key>".
    std::string key() const { return get("kind") + "|" + get("candidate") + "|" + get("problem_key"); }
};

// Parses one line; false for anything that is not a flat object (a torn last line of a killed run).
bool parse_row(const std::string &line, Row *out);
std::string to_json(const Row &r, const std::vector<std::string> &numeric_keys);

class ResultsDb {
public:
    // Reads every *.jsonl in dir (created if missing); rows are appended to `file` in it.
    bool open(const std::string &dir, const std::string &file, bool resume, std::string *error);
    bool done(const std::string &key) const { return index_.count(key) != 0; }
    const Row *find(const std::string &key) const {
        auto it = index_.find(key);
        return it == index_.end() ? nullptr : &rows_[it->second];
    }
    const std::vector<Row> &rows() const { return rows_; }
    // Appends (and fsyncs) one row; false with *error if the write failed.
    bool append(const Row &r, std::string *error);
    ~ResultsDb();

private:
    std::vector<Row> rows_;
    std::map<std::string, size_t> index_;
    FILE *out_ = nullptr;
    std::string path_;
};

// mkdir -p: every missing folder of path (0755); false if one cannot be made.
bool make_dirs(const std::string &path);

// Numeric fields of a row (written as JSON numbers, not strings).
const std::vector<std::string> &numeric_fields();

// Merges the rows of several results folders into one file (deduplicated by key, sorted by
// key, so shards merged in any order give the same file); returns rows written or -1.
long merge_results(const std::vector<std::string> &dirs, const std::string &out_file, std::string *error);

}  // namespace convbwd::tune
