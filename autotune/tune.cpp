// convbwd-tune: searches the schedule spaces for a suite of problems, verifies every candidate
// against the reference, times it against the peer in the same process, records everything in a
// results database, and writes a tuning database (with a module of the winning kernels) that the
// library uses at once. `convbwd-tune --help` lists every flag; autotune/README.md shows the loop.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

#include "autotune/build.h"
#include "autotune/results.h"
#include "autotune/search.h"
#include "common/harness.h"
#include "common/shapes.h"
#include "common/tensor.h"
#include "convbwd/convbwd.h"
#include "schedules/manifest.h"

using namespace convbwd;
using namespace convbwd::tune;

namespace {

const char kHelp[] = R"(usage: convbwd-tune (--shapes FILE | --miopen-log FILE) --target host|cuda|opencl|amdgpu [options]
       convbwd-tune --merge OUT.jsonl DIR [DIR ...]

Searches each applicable schedule family's space for the problems of a suite (grouped by class:
direction, dtype, layout, stride class, filter class, group class), builds every candidate into a
kernel module (no CMake), verifies it against the double reference on the class's edge problem
and on every suite problem, times it against the peer in the same process, and writes the winners
to a tuning database that convbwd-driver --tuning-db and CONVBWD_TUNING_DB use at once.

  --shapes FILE          MIOpenDriver lines (shapes/*.txt)
  --miopen-log FILE      a log with MIOpenDriver command lines among other text (MIOPEN_ENABLE_LOGGING_CMD)
  --direction D          bwd_data | bwd_weight | both (default: the lines' -F, else both)
  --dtype T              f32 | f16 | bf16 (default: each line's own)
  --layout L             NCHW | NHWC (default: each line's -I, else NCHW)
  --batch N              run every problem at batch N (small batches tune the host quickly)
  --target T             host | cuda | opencl | amdgpu (required; amdgpu modules are not built yet)
  --budget N             candidates per problem class (default 12)
  --time-budget S        start no new candidate after S seconds (default: none)
  --jobs J               compile workers (default: the CPUs)
  --compile-timeout S    a candidate's build is killed after S seconds (default 300)
  --max-spill B          CUDA: a candidate whose PTX spills more than B bytes, or has a kernel whose
                         stack frame (local memory) is over B bytes (ptxas -v, run where the CUDA
                         toolkit is), is pruned, never run (default 0)
  --results DIR          the results database: append-only JSON lines (default tune-results)
  --out FILE             the tuning database to write (default DIR/tuning.db; the winners' kernel
                         module goes beside it as FILE.kernels.so, named by a 'module' line)
  --resume               continue the results in DIR: nothing with a row runs again
  --shard I/N            run candidates whose index in their class is I mod N (one GPU or Slurm task each)
  --gpus N|all           CUDA: one worker process per GPU (CUDA_VISIBLE_DEVICES=one each), shard i/N
                         each, into the same --results; then promotion over all their rows
  --seed S               the search's seed (default 1): the same seed proposes the same candidates
  --refine 0|1           1 (default): random sampling, then rounds mutating the best so far;
                         0: random sampling only (what shards reproduce exactly)
  --seeds library|none   library (default): round 0 starts from the library's own kernels of each
                         class (defaults and candidates built in, with their launch knobs: no build),
                         then random points; none: random points only
  --iters N              timed calls per measurement, median (default 5)
  --peer P               onednn | cudnn | none (default: onednn on host, cudnn on cuda)
  --promote-always       write each problem's best verified candidate even where the library's
                         choice was faster (to exercise modules end to end)
  --no-promote           run and record only: no tuning database (a machine without a C compiler)
  --promote-only         run nothing: write the tuning database from the rows in --results
  --build-only           build the candidates' modules and stop (build here, carry, run elsewhere)
  --baseline B           adams2019 (host) | anderson2021 (cuda, opencl): per class, Halide's autoscheduler
                         schedules the same Funcs for the class's largest problem; verified and timed
                         on every problem like a candidate (kind "baseline" rows), never promoted
  --stop-after N         test hook: exit abruptly after N result rows (a killed run)
  --test-wrong-candidate K  test hook: the K-th module built corrupts one output element
  --merge OUT DIR...     merge results folders (shards) into one file, deduplicated and sorted
  --help
)";

struct Options {
    std::string shapes, miopen_log, direction, dtype, layout, target, results = "tune-results", out, shard = "0/1";
    std::string peer = "auto", baseline, gpus;
    int batch = 0, budget = 12, jobs = 0, iters = 5, refine = 1, seeds = 1, stop_after = -1, wrong = -1, max_spill = 0;
    double time_budget = 0, compile_timeout = 300;
    uint64_t seed = 1;
    bool resume = false, build_only = false, promote_always = false, no_promote = false, promote_only = false;
    int shard_i = 0, shard_n = 1;
};

[[noreturn]] void die(const std::string &m) {
    std::fprintf(stderr, "convbwd-tune: %s\n", m.c_str());
    std::exit(2);
}

long to_int(const std::string &flag, const std::string &v, long lo, long hi) {
    char *end = nullptr;
    const long x = std::strtol(v.c_str(), &end, 10);
    if (v.empty() || !end || *end || x < lo || x > hi)
        die(flag + " = '" + v + "': expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return x;
}

std::string now_iso() {
    char buf[32];
    std::time_t t = std::time(nullptr);
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
    return buf;
}

std::string cpu_name() {
    std::ifstream in("/proc/cpuinfo");
    for (std::string line; std::getline(in, line);)
        if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
    return "unknown CPU";
}

struct Problem {
    ConvProblem p;
    Direction dir;
    std::string key, line;
    bool edge = false;
};

// A small problem of the same class (same channels, filter, stride, padding, dilation, groups):
// few images and a small odd plane, so tile remainders and borders are exercised.
bool edge_problem(const Problem &in, Problem *out) {
    ConvProblem p = in.p;
    p.N = std::min(p.N, 2);
    p.H = std::min<int>(p.H, 9 + p.dilation_h * (p.R - 1));
    p.W = std::min<int>(p.W, 7 + p.dilation_w * (p.S - 1));
    p.P = p.Q = 0;
    p = with_derived_output(p);
    if (p.P < 1 || p.Q < 1 || stride_class(p) != stride_class(in.p) || filter_class(p) != filter_class(in.p)) return false;
    *out = in;
    out->p = p;
    out->edge = true;
    return true;
}

std::string key_of(const ConvProblem &p, Direction dir, convbwd_target t) {
    const convbwd_problem cp = to_c(p);
    convbwd_exec exec{};
    exec.target = t;
    char key[256];
    if (convbwd_problem_key(&cp, to_c(dir), to_c(p.dtype), to_c(p.layout), &exec, key, sizeof key) != CONVBWD_SUCCESS)
        die(std::string("problem ") + to_driver_line(p, dir == Direction::BwdData ? 2 : 4) + ": " + convbwd_last_error());
    return key;
}

std::vector<ShapeEntry> read_miopen_log(const std::string &path) {
    std::ifstream in(path);
    if (!in) die(path + ": cannot be read");
    std::vector<ShapeEntry> out;
    int no = 0;
    for (std::string line; std::getline(in, line);) {
        ++no;
        const size_t at = line.find("MIOpenDriver");
        if (at == std::string::npos) continue;
        DriverLine dl;
        std::string err;
        ShapeEntry e;
        if (!tokenize_driver_line(line.substr(at), &dl, &err) || dl.op.empty() ||
            !problem_from_line(dl, &e.problem, &e.directions, &err)) {
            std::fprintf(stderr, "convbwd-tune: %s:%d: skipped: %s\n", path.c_str(), no, err.c_str());
            continue;
        }
        if (e.directions == 0) e.directions = 6;
        e.line_no = no;
        e.text = line.substr(at);
        out.push_back(e);
    }
    return out;
}

double geomean(const std::vector<double> &v) {
    if (v.empty()) return NAN;
    double s = 0;
    for (double x : v) s += std::log(x);
    return std::exp(s / (double)v.size());
}

// Progress on stderr: a bar with work done/total, the best ratio so far per class, an ETA.
class Progress {
public:
    explicit Progress(size_t total) : total_(total), start_(clock()) {}
    void add_total(size_t n) { total_ += n; }
    void step(const std::string &what, const std::string &best) {
        done_++;
        const double el = seconds();
        const bool tty = isatty(2);
        if (!tty && el - last_ < 5 && done_ < total_) return;
        last_ = el;
        const double eta = done_ ? el / (double)done_ * (double)(total_ > done_ ? total_ - done_ : 0) : 0;
        const int width = 24, fill = total_ ? (int)(width * std::min<double>(1.0, (double)done_ / (double)total_)) : 0;
        std::fprintf(stderr, "%s[%s%s] %zu/%zu  %s  best %s  elapsed %s  ETA %s%s", tty ? "\r\033[K" : "",
                     std::string((size_t)fill, '#').c_str(), std::string((size_t)(width - fill), '.').c_str(), done_, total_,
                     what.c_str(), best.c_str(), fmt_time(el).c_str(), fmt_time(eta).c_str(), tty ? "" : "\n");
        std::fflush(stderr);
    }
    void finish() {
        if (isatty(2)) std::fprintf(stderr, "\n");
    }
    double seconds() const { return std::chrono::duration<double>(clock() - start_).count(); }
    static std::string fmt_time(double s) {
        char buf[32];
        if (s >= 3600) std::snprintf(buf, sizeof buf, "%dh%02dm", (int)(s / 3600), (int)std::fmod(s / 60, 60));
        else std::snprintf(buf, sizeof buf, "%dm%02ds", (int)(s / 60), (int)std::fmod(s, 60));
        return buf;
    }

private:
    static std::chrono::steady_clock::time_point clock() { return std::chrono::steady_clock::now(); }
    size_t total_, done_ = 0;
    std::chrono::steady_clock::time_point start_;
    double last_ = -1e9;
};

struct ClassWork {
    ProblemClass cls;
    std::vector<const Family *> fams;
    std::vector<Problem> problems;  // the suite's (timed)
    Problem edge;                   // verified only
    bool has_edge = false;
    std::vector<Candidate> candidates;
    std::set<std::string> seen;  // candidate ids proposed
};

}  // namespace

// --gpus: one worker per GPU, each this program again with --shard i/N and its own GPU; the
// parent shows their rows as they land and waits.
void run_gpu_workers(const Options &o, int argc, char **argv) {
    std::vector<std::string> ids;
    if (const char *v = std::getenv("CUDA_VISIBLE_DEVICES"); v && *v) {
        std::stringstream ss(v);
        for (std::string id; std::getline(ss, id, ',');) ids.push_back(id);
    } else if (FILE *f = popen("nvidia-smi -L 2>/dev/null", "r")) {
        char line[512];
        for (int i = 0; std::fgets(line, sizeof line, f); i++)
            if (std::strncmp(line, "GPU ", 4) == 0) ids.push_back(std::to_string(i));
        pclose(f);
    }
    if (ids.empty()) die("--gpus: no GPU visible (CUDA_VISIBLE_DEVICES is empty and nvidia-smi -L lists none)");
    const int n = o.gpus == "all" ? (int)ids.size() : (int)to_int("--gpus", o.gpus, 1, 1024);
    if (n > (int)ids.size()) die("--gpus " + o.gpus + ": only " + std::to_string(ids.size()) + " GPUs are visible");
    make_dirs(o.results);
    std::vector<pid_t> pids;
    for (int i = 0; i < n; i++) {
        const std::string shard = std::to_string(i) + "/" + std::to_string(n), log = o.results + "/gpu-" + std::to_string(i) + ".log";
        std::vector<std::string> args = {"/proc/self/exe"};
        for (int k = 1; k < argc; k++) {
            if (std::string(argv[k]) == "--gpus") {
                k++;
                continue;
            }
            args.push_back(argv[k]);
        }
        for (const char *a : {"--shard", shard.c_str(), "--no-promote"}) args.push_back(a);
        const pid_t pid = fork();
        if (pid == 0) {
            setenv("CUDA_VISIBLE_DEVICES", ids[i].c_str(), 1);
            if (!std::freopen(log.c_str(), "w", stdout) || dup2(fileno(stdout), 2) < 0) _exit(126);
            std::vector<char *> av;
            for (std::string &a : args) av.push_back(a.data());
            av.push_back(nullptr);
            execv(av[0], av.data());
            _exit(127);
        }
        if (pid < 0) die("--gpus: fork failed");
        pids.push_back(pid);
        std::fprintf(stderr, "convbwd-tune: worker %d on GPU %s: --shard %s (log %s)\n", i, ids[i].c_str(), shard.c_str(), log.c_str());
    }
    const auto t0 = std::chrono::steady_clock::now();
    for (int left = n; left > 0;) {
        for (pid_t &pid : pids) {
            int st = 0;
            if (pid > 0 && waitpid(pid, &st, WNOHANG) == pid) {
                const int w = (int)(&pid - pids.data());
                std::fprintf(stderr, "\nconvbwd-tune: worker %d %s\n", w,
                             WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "finished" : "failed (see its log)");
                pid = -1, left--;
            }
        }
        std::string line;
        for (int i = 0; i < n; i++) {
            std::ifstream f(o.results + "/results.shard-" + std::to_string(i) + "-of-" + std::to_string(n) + ".jsonl");
            const long rows = (long)std::count(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>(), '\n');
            line += " gpu" + std::to_string(i) + ": " + std::to_string(rows);
        }
        const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::fprintf(stderr, "%s[workers] rows%s  elapsed %.0f s%s", isatty(2) ? "\r\033[K" : "", line.c_str(), el,
                     isatty(2) ? "" : "\n");
        if (left > 0) sleep(isatty(2) ? 1 : 30);
    }
}

// The chart of the search (autotune/chart.py) with the set-up's Python, where both are here.
void draw_chart(const std::string &results) {
    const std::string py = CONVBWD_TUNE_PYTHON, script = CONVBWD_TUNE_CHART;
    struct stat st;
    if (py.empty() || ::stat(py.c_str(), &st) != 0 || ::stat(script.c_str(), &st) != 0) {
        std::printf("chart: python3 autotune/chart.py %s (not drawn here: no set-up Python)\n", results.c_str());
        return;
    }
    const std::string cmd = "'" + py + "' '" + script + "' '" + results + "' --png '" + results + "/search.png' | tail -n 1";
    std::fflush(stdout);
    if (std::system(cmd.c_str()) != 0) std::printf("chart: %s failed\n", cmd.c_str());
}

int main(int argc, char **argv) {
    Options o;
    std::vector<std::string> merge_args;
    for (int i = 1; i < argc; i++) {
        const std::string a = argv[i];
        auto val = [&]() -> std::string {
            if (i + 1 >= argc) die(a + " needs a value");
            return argv[++i];
        };
        if (a == "--help" || a == "-h") {
            std::fputs(kHelp, stdout);
            return 0;
        } else if (a == "--shapes") o.shapes = val();
        else if (a == "--miopen-log") o.miopen_log = val();
        else if (a == "--direction") o.direction = val();
        else if (a == "--dtype") o.dtype = val();
        else if (a == "--layout") o.layout = val();
        else if (a == "--batch") o.batch = (int)to_int(a, val(), 1, 1 << 20);
        else if (a == "--target") o.target = val();
        else if (a == "--budget") o.budget = (int)to_int(a, val(), 1, 100000);
        else if (a == "--time-budget") o.time_budget = (double)to_int(a, val(), 1, 1L << 30);
        else if (a == "--jobs") o.jobs = (int)to_int(a, val(), 1, 1024);
        else if (a == "--compile-timeout") o.compile_timeout = (double)to_int(a, val(), 1, 86400);
        else if (a == "--results") o.results = val();
        else if (a == "--out") o.out = val();
        else if (a == "--resume") o.resume = true;
        else if (a == "--shard") o.shard = val();
        else if (a == "--gpus") o.gpus = val();
        else if (a == "--seed") o.seed = (uint64_t)to_int(a, val(), 0, 1L << 62);
        else if (a == "--refine") o.refine = (int)to_int(a, val(), 0, 1);
        else if (a == "--seeds") {
            const std::string v = val();
            if (v != "library" && v != "none") die("--seeds = '" + v + "': expected library or none");
            o.seeds = v == "library";
        }
        else if (a == "--iters") o.iters = (int)to_int(a, val(), 1, 1000);
        else if (a == "--peer") o.peer = val();
        else if (a == "--build-only") o.build_only = true;
        else if (a == "--promote-always") o.promote_always = true;
        else if (a == "--no-promote") o.no_promote = true;
        else if (a == "--promote-only") o.promote_only = true, o.resume = true;
        else if (a == "--baseline") o.baseline = val();
        else if (a == "--max-spill") o.max_spill = (int)to_int(a, val(), 0, 1 << 20);
        else if (a == "--stop-after") o.stop_after = (int)to_int(a, val(), 0, 1 << 30);
        else if (a == "--test-wrong-candidate") o.wrong = (int)to_int(a, val(), 0, 1 << 30);
        else if (a == "--merge") {
            for (i++; i < argc; i++) merge_args.push_back(argv[i]);
            if (merge_args.size() < 2) die("--merge OUT.jsonl DIR [DIR ...]");
        } else die("unknown flag '" + a + "' (--help lists them)");
    }
    if (!merge_args.empty()) {
        std::string err;
        const long n = merge_results({merge_args.begin() + 1, merge_args.end()}, merge_args[0], &err);
        if (n < 0) die(err);
        std::printf("merged %ld rows into %s\n", n, merge_args[0].c_str());
        return 0;
    }
    if (!o.baseline.empty() && o.baseline != "adams2019" && o.baseline != "anderson2021")
        die("--baseline = '" + o.baseline + "' is not adams2019|anderson2021");
    if (o.shapes.empty() == o.miopen_log.empty()) die("give one of --shapes FILE and --miopen-log FILE");
    if (o.target.empty()) die("--target is required (host, cuda, opencl, amdgpu)");
    convbwd_target target;
    Device device;
    if (o.target == "host") target = CONVBWD_TARGET_HOST, device = Device::Host;
    else if (o.target == "cuda") target = CONVBWD_TARGET_CUDA, device = Device::Cuda;
    else if (o.target == "opencl") target = CONVBWD_TARGET_OPENCL, device = Device::OpenCL;
    else if (o.target == "amdgpu") target = CONVBWD_TARGET_AMDGPU, device = Device::AmdGpu;
    else die("--target = '" + o.target + "' is not host|cuda|opencl|amdgpu");
    if (o.direction != "" && o.direction != "bwd_data" && o.direction != "bwd_weight" && o.direction != "both")
        die("--direction = '" + o.direction + "' is not bwd_data|bwd_weight|both");
    if (o.dtype != "" && o.dtype != "f32" && o.dtype != "f16" && o.dtype != "bf16")
        die("--dtype = '" + o.dtype + "' is not f32|f16|bf16");
    if (o.layout != "" && o.layout != "NCHW" && o.layout != "NHWC") die("--layout = '" + o.layout + "' is not NCHW|NHWC");
    {
        const size_t slash = o.shard.find('/');
        if (slash == std::string::npos) die("--shard = '" + o.shard + "' is not I/N");
        o.shard_n = (int)to_int("--shard N", o.shard.substr(slash + 1), 1, 100000);
        o.shard_i = (int)to_int("--shard I", o.shard.substr(0, slash), 0, o.shard_n - 1);
    }
    if (!o.gpus.empty()) {
        if (device != Device::Cuda) die("--gpus is for --target cuda (host shards need a machine each: --shard)");
        if (o.shard != "0/1") die("--gpus runs the shards itself: leave out --shard");
        run_gpu_workers(o, argc, argv);
        if (o.no_promote) return 0;
        o.promote_only = o.resume = true;  // every worker's rows are in --results: promote them
    }
    if (o.peer == "auto") o.peer = device == Device::Host ? "onednn" : device == Device::Cuda ? "cudnn" : "none";
    if (o.peer != "onednn" && o.peer != "cudnn" && o.peer != "none") die("--peer = '" + o.peer + "' is not onednn|cudnn|none");
    if (o.peer == "none") o.peer.clear();
    if (o.jobs == 0) o.jobs = std::max(1, (int)sysconf(_SC_NPROCESSORS_ONLN));
    if (o.out.empty()) o.out = o.results + "/tuning.db";

    // Problems, grouped by class (std::map: the same order on every run).
    std::vector<ShapeEntry> entries;
    try {
        entries = o.shapes.empty() ? read_miopen_log(o.miopen_log) : load_shapes(o.shapes);
    } catch (const std::exception &e) {
        die(e.what());
    }
    std::map<std::string, ClassWork> classes;
    std::set<std::string> keys;
    for (const ShapeEntry &e : entries) {
        for (Direction dir : {Direction::BwdData, Direction::BwdWeight}) {
            const int bit = dir == Direction::BwdData ? 2 : 4;
            if (o.direction.empty() && !(e.directions & bit)) continue;
            if (!o.direction.empty() && o.direction != "both" && o.direction != to_string(dir)) continue;
            Problem pr;
            pr.p = e.problem;
            pr.dir = dir;
            if (o.dtype == "f32") pr.p.dtype = DType::F32;
            if (o.dtype == "f16") pr.p.dtype = DType::F16;
            if (o.dtype == "bf16") pr.p.dtype = DType::BF16;
            if (o.layout == "NCHW") pr.p.layout = Layout::NCHW;
            if (o.layout == "NHWC") pr.p.layout = Layout::NHWC;
            if (o.batch) pr.p.N = o.batch;
            pr.key = key_of(pr.p, dir, target);
            if (!keys.insert(pr.key).second) continue;  // the same problem twice
            pr.line = to_driver_line(pr.p, bit);
            const ProblemClass c = class_of(pr.p, dir, device);
            ClassWork &w = classes[c.key()];
            if (w.problems.empty()) {
                w.cls = c;
                w.fams = families_for(c);
                w.has_edge = edge_problem(pr, &w.edge);
                if (w.has_edge) w.edge.key = key_of(w.edge.p, dir, target), w.edge.line = to_driver_line(w.edge.p, bit);
            }
            w.problems.push_back(pr);
        }
    }
    if (classes.empty()) die("no problems (check --shapes, --direction)");

    // Kernels built into this library (a candidate equal to one needs no build).
    // Those of a class's own (stride, filter) class are its warm start (--seeds library): the
    // points someone already chose for it, each as built (its launch knobs the kernel's defaults).
    std::set<std::string> built_in;
    std::vector<std::pair<std::string, std::string>> library_points;  // (family, every knob) in registry order
    for (int i = 0; i < convbwd_kernel_count(); i++) {
        convbwd_kernel_desc d;
        if (convbwd_kernel_info(i, &d) != CONVBWD_SUCCESS) continue;
        built_in.insert(d.name);
        if (!d.module && d.family && d.schedule && std::string(d.role ? d.role : "") != "baseline")
            library_points.push_back({d.family, d.schedule});
    }

    ResultsDb db;
    std::string err;
    const std::string shard_file =
        o.shard_n == 1 ? "results.jsonl" : "results.shard-" + std::to_string(o.shard_i) + "-of-" + std::to_string(o.shard_n) + ".jsonl";
    if (!db.open(o.results, shard_file, o.resume, &err)) die(err);
    // The machine the rows were timed on: the CPU's model, or the GPU's name (NVIDIA H100 80GB
    // HBM3, gfx90a...) where one is open; the target alone on a machine without one (build-only).
    std::string device_name = o.target;
    if (device == Device::Host) device_name = cpu_name();
    else if (GpuDevice *gpu = o.build_only ? nullptr : gpu_device(device)) device_name = gpu->name();
    int rows_written = 0;
    auto write = [&](Row r) {
        r.f["device"] = device_name;
        r.f["commit"] = CONVBWD_TUNE_COMMIT;
        r.f["seed"] = std::to_string(o.seed);
        r.f["shard"] = o.shard;
        r.f["at"] = now_iso();
        if (!db.append(r, &err)) die(err);
        if (o.stop_after >= 0 && ++rows_written >= o.stop_after) {
            std::fprintf(stderr, "\nconvbwd-tune: --stop-after %d: stopping abruptly\n", o.stop_after);
            std::_Exit(3);
        }
    };

    BuildConfig bc;
    bc.dir = o.results + "/modules";
    bc.host_generator = CONVBWD_TUNE_HOST_GENERATOR;
    bc.gpu_generator = CONVBWD_TUNE_GPU_GENERATOR;
    bc.host_target = CONVBWD_TUNE_HOST_BASELINE;
    bc.cuda_capability = CONVBWD_TUNE_CUDA_CAPABILITY;
    bc.cc = std::getenv("CC") && *std::getenv("CC") ? std::getenv("CC") : CONVBWD_TUNE_CC;
    bc.objcopy = CONVBWD_TUNE_OBJCOPY;
    bc.include_dir = CONVBWD_TUNE_INCLUDE_DIR;
    bc.halide_include_dir = CONVBWD_TUNE_HALIDE_INCLUDE_DIR;
    if (const char *g = std::getenv("CONVBWD_TUNE_GENERATOR_DIR"); g && *g)
        bc.host_generator = std::string(g) + "/convbwd_host.generator", bc.gpu_generator = std::string(g) + "/convbwd_gpu.generator";
    bc.jobs = o.jobs;
    bc.timeout_s = o.compile_timeout;
    bc.wrong_kernel = o.wrong;
    bc.ptxas = CONVBWD_TUNE_PTXAS;
    if (const char *p = std::getenv("CONVBWD_PTXAS")) bc.ptxas = p;  // empty: do not check
    bc.max_spill_bytes = o.max_spill;
    if (std::string e; generator_target(bc, device, &e).empty()) die(e);

    // The results row of a module's build (candidate or baseline), from its BuildResult.
    auto build_row = [](const BuildJob &j, const std::string &ck, const BuildResult &b, Row *r) {
        r->f["kind"] = "build", r->f["candidate"] = j.kernel, r->f["class"] = ck, r->f["family"] = j.family->name;
        r->f["status"] = b.ok ? "ok" : b.status == "ok" ? "error" : b.status;
        if (!b.ok) r->f["error"] = b.error;
        if (b.regs >= 0) {
            r->f["regs"] = std::to_string(b.regs);
            r->f["spill_stores"] = std::to_string(b.spill_stores), r->f["spill_loads"] = std::to_string(b.spill_loads);
            r->f["stack_bytes"] = std::to_string(b.stack_bytes);
        }
        r->f["module"] = b.module;
        char sec[32];
        std::snprintf(sec, sizeof sec, "%.1f", b.seconds);
        r->f["build_s"] = sec;
    };

    size_t planned = 0;
    for (auto &[k, w] : classes) planned += (w.problems.size() + (w.has_edge ? 1 : 0)) * (size_t)o.budget + w.problems.size();
    Progress progress(o.build_only ? 0 : planned);
    std::map<std::string, std::string> best_text;  // class -> "0.84x onednn"
    auto best_of = [&](const std::string &c) { return best_text.count(c) ? best_text[c] : std::string("-"); };

    // Each problem's inputs and reference are drawn and computed once for all its candidates
    // (the same seed draws the same inputs anyway: this only saves the double reference).
    std::map<std::string, CaseData> case_data;
    auto run_one = [&](const Problem &pr, const std::string &kernel, bool time, bool with_peer, Row *row) {
        RunSpec s;
        s.cache = &case_data[pr.key];
        s.p = pr.p, s.dir = pr.dir, s.device = device, s.kernel = kernel;
        s.verify = true, s.time = time, s.warmup = 1, s.iters = o.iters;
        if (with_peer) s.peer = o.peer;
        std::mt19937 rng((unsigned)seed_for(o.seed, pr.key));
        RunResult r = run_case(s, rng);
        row->f["kernel"] = r.kernel;
        if (r.status == CONVBWD_NO_KERNEL) row->f["status"] = "cannot_implement", row->f["error"] = r.error;
        else if (r.status != CONVBWD_SUCCESS) row->f["status"] = "error", row->f["error"] = r.error;
        else if (!r.verify.ok) {
            row->f["status"] = "wrong";
            row->f["error"] = r.verify.first_bad + " (" + std::to_string(r.verify.mismatches) + " mismatches, " +
                              std::to_string(r.verify.unwritten) + " unwritten)";
            row->f["max_error"] = std::to_string(r.verify.max_err);
        } else {
            row->f["status"] = "ok";
            if (time) {
                char b[32];
                std::snprintf(b, sizeof b, "%.6g", r.time_ms);
                row->f["time_ms"] = b;
            }
        }
        if (with_peer && !o.peer.empty()) {
            row->f["peer"] = o.peer;
            if (std::isfinite(r.peer.time_ms) && r.peer.verified != 0) {
                char b[32];
                std::snprintf(b, sizeof b, "%.6g", r.peer.time_ms);
                row->f["peer_ms"] = b;
            }
            row->f["peer_note"] = r.peer.note;
        }
    };

    // 1. The library's choice on every problem, with the peer: the baseline a winner must beat.
    std::map<std::string, double> default_ms, peer_ms;
    std::map<std::string, std::string> default_kernel;
    auto absorb_default = [&](const Row &r) {
        default_ms[r.get("problem_key")] = r.num("time_ms");
        peer_ms[r.get("problem_key")] = r.num("peer_ms");
        default_kernel[r.get("problem_key")] = r.get("kernel");
    };
    if (!o.build_only)
        for (auto &[ck, w] : classes)
            for (const Problem &pr : w.problems) {
                if (o.promote_only) {
                    if (const Row *old = db.find("default||" + pr.key)) absorb_default(*old);
                    continue;
                }
                Row r;
                r.f["kind"] = "default", r.f["class"] = ck, r.f["problem_key"] = pr.key, r.f["problem"] = pr.line;
                if (const Row *old = db.find(r.key())) {
                    absorb_default(*old);
                    progress.step(ck, best_of(ck));
                    continue;
                }
                run_one(pr, "", true, true, &r);
                write(r);
                absorb_default(r);
                progress.step(ck, best_of(ck));
            }

    // Ratio peer / time of a candidate's rows in a class: per problem, from every results row.
    auto candidate_times = [&](const ClassWork &w, const std::string &id, std::vector<double> *ms) {
        ms->clear();
        for (const Problem &pr : w.problems) {
            const Row *r = db.find("run|" + id + "|" + pr.key);
            if (!r || r->get("status") != "ok" || !std::isfinite(r->num("time_ms"))) return false;
            ms->push_back(r->num("time_ms"));
        }
        return true;
    };
    auto update_best = [&](const std::string &ck, const ClassWork &w) {
        double best = 0;
        for (const Candidate &c : w.candidates) {
            std::vector<double> ms;
            if (!candidate_times(w, c.id(), &ms)) continue;
            std::vector<double> ratio;
            for (size_t i = 0; i < ms.size(); i++)
                if (std::isfinite(peer_ms[w.problems[i].key])) ratio.push_back(peer_ms[w.problems[i].key] / ms[i]);
            if (!ratio.empty()) best = std::max(best, geomean(ratio));
        }
        if (best > 0) {
            char b[64];
            std::snprintf(b, sizeof b, "%.2fx %s", best, o.peer.c_str());
            best_text[ck] = b;
        }
    };

    // 2. Rounds of candidates per class.
    const auto t0 = std::chrono::steady_clock::now();
    auto out_of_time = [&] {
        return o.time_budget > 0 &&
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > o.time_budget;
    };
    std::map<std::string, BuildResult> built;  // kernel -> its module
    int modules_built = 0, jobs_started = 0;
    for (auto &class_entry : classes) {
        // Named references, not a structured binding: the lambdas below capture ck (C++17).
        const std::string &ck = class_entry.first;
        auto &w = class_entry.second;
        if (w.fams.empty()) {
            std::fprintf(stderr, "convbwd-tune: %s: no schedule family serves this class\n", ck.c_str());
            continue;
        }
        Rng rng(seed_for(o.seed, ck));
        int round = 0;
        // The library's kernels of exactly this class (the name a point derives for the class is
        // the kernel's own): proposed first, in the registry's (manifest's) order.
        std::vector<KnobValues> seeds;
        if (o.seeds) {
            for (const auto &lp : library_points) {
                const Family *f = find_family(lp.first);
                if (!f || std::find(w.fams.begin(), w.fams.end(), f) == w.fams.end()) continue;
                KnobValues v = default_values(*f);
                if (!parse_knobs(lp.second, &v).empty() || !valid(v, w.cls.cls).empty()) continue;
                // A kernel of another (stride, filter) class derives another name: not this class's.
                if (built_in.count(make_candidate(w.cls, *f, v).kernel)) seeds.push_back(v);
            }
        }
        size_t next_seed = 0;
        while ((int)w.candidates.size() < o.budget && !out_of_time()) {
            const int left = o.budget - (int)w.candidates.size();
            // Round 0: every seed (within the budget), at least half the budget with random points.
            const int want = !o.refine ? left
                             : round == 0 ? std::min(left, std::max((o.budget + 1) / 2, (int)seeds.size()))
                                          : std::max(1, (left + 1) / 2);
            // Parents for refinement: the best three by geomean time over the class's problems.
            std::vector<std::pair<double, size_t>> ranked;
            for (size_t i = 0; i < w.candidates.size(); i++) {
                std::vector<double> ms;
                if (candidate_times(w, w.candidates[i].id(), &ms)) ranked.push_back({geomean(ms), i});
            }
            std::sort(ranked.begin(), ranked.end());
            std::vector<Candidate> fresh;
            for (int tries = 0; (int)fresh.size() < want && tries < want * 50; tries++) {
                KnobValues v;
                bool ok;
                if (round == 0 && next_seed < seeds.size()) {
                    v = seeds[next_seed++];
                    ok = true;
                } else if (round == 0 || ranked.empty()) {
                    ok = random_point(w.cls, *w.fams[rng.below(w.fams.size())], rng, &v);
                } else {
                    const size_t parent = ranked[rng.below(std::min<size_t>(3, ranked.size()))].second;
                    // Odd rounds move launch-time knobs only (the parents' own kernels: no build, so a
                    // machine without the generator runs the whole round), even rounds any knob. The
                    // same on every machine: proposals depend on the seed and the rows alone.
                    ok = mutate_point(w.cls, w.candidates[parent].knobs, rng, &v, round % 2 == 1);
                }
                if (!ok) continue;
                Candidate c = make_candidate(w.cls, *v.family, v);
                if (!w.seen.insert(c.id()).second) continue;
                c.round = round;
                c.index = (int)(w.candidates.size() + fresh.size());
                fresh.push_back(c);
            }
            if (fresh.empty()) break;  // the space is exhausted
            // This shard's share, then the kernels it must build (once each, not built in).
            std::vector<Candidate *> mine;
            for (Candidate &c : fresh)
                if (c.index % o.shard_n == o.shard_i) mine.push_back(&c);
            std::vector<BuildJob> jobs;
            std::set<std::string> queued;
            if (o.promote_only) mine.clear();  // the candidates are proposed (to know them), not run
            for (Candidate *c : mine) {
                if (built_in.count(c->kernel) || built.count(c->kernel) || !queued.insert(c->kernel).second) continue;
                if (const Row *r = db.find("build|" + c->kernel + "|"); r && r->get("status") != "ok") {
                    BuildResult b;
                    b.error = r->get("error");
                    b.status = r->get("status");
                    built[c->kernel] = b;  // failed before: not again
                    continue;
                }
                jobs.push_back({c->kernel, c->family, w.cls.cls, c->knobs});
            }
            bc.wrong_kernel = o.wrong < 0 ? -1 : o.wrong - jobs_started;  // the hook counts over the run
            jobs_started += (int)jobs.size();
            build_modules(bc, jobs, [&](size_t i, const BuildResult &b) {
                BuildResult res = b;
                if (b.ok && !o.build_only) {
                    if (convbwd_load_kernel_module(b.module.c_str()) != CONVBWD_SUCCESS)
                        res.ok = false, res.error = std::string("load failed: ") + convbwd_last_error();
                }
                built[jobs[i].kernel] = res;
                modules_built += b.ok;
                Row r;
                build_row(jobs[i], ck, res, &r);
                if (res.status != "unbuilt" && (!db.done(r.key()) || !res.ok)) write(r);
                std::fprintf(stderr, "%sbuilt %s: %s (%.1f s)\n", isatty(2) ? "\r\033[K" : "", jobs[i].kernel.c_str(),
                             res.ok ? "ok" : res.error.c_str(), b.seconds);
            });
            for (Candidate &c : fresh) w.candidates.push_back(c);
            round++;
            if (o.build_only) continue;
            // Verify (edge problem, then every suite problem) and time each candidate, one at a time.
            for (Candidate *c : mine) {
                if (out_of_time()) break;
                const bool in_lib = built_in.count(c->kernel) != 0;
                const BuildResult *b = in_lib ? nullptr : &built[c->kernel];
                if (b && b->status == "unbuilt") {  // no row: a later build and --resume take it
                    for (size_t k = 0; k < w.problems.size() + (w.has_edge ? 1 : 0); k++) progress.step(ck, best_of(ck));
                    continue;
                }
                bool wrong_on_edge = false;
                std::vector<const Problem *> todo;
                if (w.has_edge) todo.push_back(&w.edge);
                for (const Problem &pr : w.problems) todo.push_back(&pr);
                for (const Problem *pr : todo) {
                    Row r;
                    r.f["kind"] = "run", r.f["candidate"] = c->id(), r.f["problem_key"] = pr->key;
                    if (db.done(r.key())) {
                        wrong_on_edge = wrong_on_edge || (pr->edge && db.find(r.key())->get("status") == "wrong");
                        progress.step(ck, best_of(ck));
                        continue;
                    }
                    r.f["class"] = ck, r.f["problem"] = pr->line, r.f["family"] = c->family->name;
                    r.f["knobs"] = print_knobs(c->knobs), r.f["launch"] = c->launch;
                    r.f["round"] = std::to_string(c->round), r.f["index"] = std::to_string(c->index);
                    r.f["edge"] = pr->edge ? "1" : "0";
                    if (b && !b->ok) {
                        r.f["status"] = b->status == "pruned" ? "pruned" : "compile_failed";
                        r.f["error"] = b->error, r.f["kernel"] = c->kernel;
                    } else if (wrong_on_edge) {
                        r.f["status"] = "wrong", r.f["error"] = "wrong on the class's edge problem", r.f["kernel"] = c->kernel;
                    } else {
                        run_one(*pr, c->id(), !pr->edge, false, &r);
                        wrong_on_edge = pr->edge && r.get("status") == "wrong";
                    }
                    write(r);
                    progress.step(ck, best_of(ck));
                }
                update_best(ck, w);
            }
        }
    }
    progress.finish();

    // 2b. The autoscheduler baseline per class (--baseline; shard 0 only: one kernel a class).
    std::map<std::string, double> baseline_ms;  // problem key -> ms
    if (!o.baseline.empty() && o.shard_i == 0) {
        for (auto &[ck, w] : classes) {
            const Family *bf = nullptr;
            for (const Family &f : families())
                if (f.autoscheduler && f.dir == w.cls.cls.dir && f.kind == schedule_kind(device) &&
                    std::strstr(f.name, o.baseline.c_str()))
                    bf = &f;
            if (!bf) {
                std::fprintf(stderr, "convbwd-tune: %s: no %s baseline for this device\n", ck.c_str(), o.baseline.c_str());
                continue;
            }
            const std::string plugin = o.baseline == "adams2019" ? CONVBWD_TUNE_ADAMS2019 : CONVBWD_TUNE_ANDERSON2021;
            const Problem *big = &w.problems[0];  // estimates: the class's largest problem
            auto work = [](const ConvProblem &q) { return (double)q.N * q.C * q.H * q.W * q.K * q.R * q.S / q.G; };
            for (const Problem &pr : w.problems)
                if (work(pr.p) > work(big->p)) big = &pr;
            const ConvProblem &q = big->p;
            char est[160];
            std::snprintf(est, sizeof est, "%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d", q.N, q.C, q.H, q.W, q.K, q.R, q.S, q.stride_h,
                          q.pad_top, q.dilation_h, q.G);
            const int par = device == Device::Host ? std::max(1, (int)sysconf(_SC_NPROCESSORS_ONLN)) : 132;
            const KnobValues kv = default_values(*bf);
            Candidate c = make_candidate(w.cls, *bf, kv);
            // One baseline module per class: the name carries the group class too (its estimates
            // are that class's problem), else the 3x3 depthwise class reused the grouped one's.
            c.kernel = baseline_kernel_name(c.kernel, w.cls.groups);
            BuildJob job{c.kernel, bf, w.cls.cls, kv, Role::Baseline,
                         "-p '" + plugin + "' autoscheduler=" + bf->autoscheduler + " autoscheduler.parallelism=" +
                             std::to_string(par) + " estimates=" + est};
            BuildResult b;
            if (const Row *old = db.find("build|" + c.kernel + "|"); old && old->get("status") != "ok") {
                b.error = old->get("error");
            } else {
                bc.wrong_kernel = -1;
                build_modules(bc, {job}, [&](size_t, const BuildResult &res) { b = res; });
                if (b.ok && !o.build_only && convbwd_load_kernel_module(b.module.c_str()) != CONVBWD_SUCCESS)
                    b.ok = false, b.error = std::string("load failed: ") + convbwd_last_error();
                Row r;
                build_row(job, ck, b, &r);
                r.f["estimates"] = est;
                if (!db.done(r.key()) || !b.ok) write(r);
                std::fprintf(stderr, "baseline %s (%s, estimates %s): %s (%.1f s)\n", c.kernel.c_str(), bf->autoscheduler, est,
                             b.ok ? "built" : b.error.c_str(), b.seconds);
            }
            if (o.build_only) continue;
            for (const Problem &pr : w.problems) {
                Row r;
                r.f["kind"] = "baseline", r.f["candidate"] = c.kernel, r.f["problem_key"] = pr.key;
                if (!db.done(r.key())) {
                    r.f["class"] = ck, r.f["problem"] = pr.line, r.f["family"] = bf->name, r.f["edge"] = "0";
                    if (!b.ok) r.f["status"] = "compile_failed", r.f["error"] = b.error, r.f["kernel"] = c.kernel;
                    else run_one(pr, c.kernel, true, false, &r);
                    write(r);
                }
                const Row *done = db.find(r.key());
                if (done && done->get("status") == "ok") baseline_ms[pr.key] = done->num("time_ms");
            }
        }
    }
    if (o.build_only) {
        std::printf("built %d modules into %s\n", modules_built, bc.dir.c_str());
        return 0;
    }


    // 3. Promote: per problem, the fastest verified candidate if it beats the library's choice.
    struct Win {
        std::string key, kernel, launch, cls;
        double ms, default_ms, peer_ms;
    };
    std::vector<Win> wins;
    std::map<std::string, std::vector<Win>> per_class_best;  // every problem's best (default included)
    for (auto &[ck, w] : classes)
        for (const Problem &pr : w.problems) {
            Win best{pr.key, "", "", ck, default_ms[pr.key], default_ms[pr.key], peer_ms[pr.key]};
            if (o.promote_always) best.ms = NAN;
            for (const Row &r : db.rows()) {
                if (r.get("kind") != "run" || r.get("problem_key") != pr.key || r.get("status") != "ok") continue;
                const double ms = r.num("time_ms");
                if (std::isfinite(ms) && (!std::isfinite(best.ms) || ms < best.ms)) {
                    best.ms = ms;
                    best.kernel = r.get("kernel");
                    best.launch = r.get("launch");
                }
            }
            per_class_best[ck].push_back(best);
            if (best.kernel.empty()) continue;  // nothing verified beat the library's choice
            // A margin against noise: the library's choice stays unless beaten by 3%.
            if (!o.promote_always && std::isfinite(best.default_ms) && !(best.ms < 0.97 * best.default_ms)) continue;
            wins.push_back(best);
        }
    std::vector<BuildJob> module_kernels;
    std::set<std::string> in_module;
    for (const Win &wn : wins) {
        if (built_in.count(wn.kernel) || !in_module.insert(wn.kernel).second) continue;
        // The kernel's family and knobs from its own row (another shard, or a refinement this
        // process did not propose, may have found it).
        const Row *from = nullptr;
        for (const Row &r : db.rows())
            if (r.get("kind") == "run" && r.get("kernel") == wn.kernel && !r.get("knobs").empty()) from = &r;
        const Family *fam = from ? find_family(from->get("family")) : nullptr;
        if (!fam) die("promoting " + wn.kernel + ": no results row names its family and knobs");
        KnobValues kv = default_values(*fam);
        if (std::string e = parse_knobs(from->get("knobs"), &kv); !e.empty()) die("promoting " + wn.kernel + ": " + e);
        module_kernels.push_back({wn.kernel, fam, classes[wn.cls].cls.cls, kv});
    }
    // The module of the winners, beside the database (one file to carry with it).
    const size_t slash = o.out.rfind('/');
    const std::string out_dir = slash == std::string::npos ? "." : o.out.substr(0, slash);
    const std::string module_name = o.out.substr(slash == std::string::npos ? 0 : slash + 1) + ".kernels.so";
    if (!o.no_promote) make_dirs(out_dir);
    if (!o.no_promote && !module_kernels.empty() && !link_module(bc, module_kernels, out_dir + "/" + module_name, &err))
        die(err);
    if (!o.no_promote) {
        std::ofstream db_out(o.out);
        db_out << "# convbwd tuning database, written by convbwd-tune " << now_iso() << "\n# command:";
        for (int i = 0; i < argc; i++) db_out << " " << argv[i];
        db_out << "\n# device: " << device_name << "; commit " << CONVBWD_TUNE_COMMIT << "; seed " << o.seed
               << "; records: the fastest verified candidate per problem where it beat the library's choice by 3%\n";
        if (!module_kernels.empty()) db_out << "module " << module_name << "\n";
        for (const Win &wn : wins) {
            char c[160];
            std::snprintf(c, sizeof c, "   # %.4g ms, library %.4g ms, %s %.4g ms", wn.ms, wn.default_ms,
                          o.peer.empty() ? "peer" : o.peer.c_str(), wn.peer_ms);
            db_out << wn.key << " " << wn.kernel << (wn.launch.empty() ? "" : " " + wn.launch) << c << "\n";
        }
        if (!db_out) die(o.out + ": cannot be written");
    }

    // 4. The table per class, and the manifest records a maintainer would add.
    std::printf("\n%-44s %5s %9s %9s %9s %9s  %s\n", "class", "probs", "default", "tuned", "best-one",
                o.baseline.empty() ? "baseline" : o.baseline.c_str(), "ratios: peer time / ours (geomean; >1 = faster than the peer)");
    std::vector<std::string> manifest_lines;
    std::vector<ManifestRecord> manifest;
    read_manifest(CONVBWD_TUNE_MANIFEST, &manifest);
    for (auto &[ck, w] : classes) {
        std::vector<double> rd, rt;
        for (const Win &b : per_class_best[ck]) {
            if (!std::isfinite(b.peer_ms)) continue;
            if (std::isfinite(b.default_ms)) rd.push_back(b.peer_ms / b.default_ms);
            const double t = std::isfinite(b.default_ms) && !(b.ms < b.default_ms) ? b.default_ms : b.ms;
            if (std::isfinite(t)) rt.push_back(b.peer_ms / t);
        }
        // The best single candidate over the whole class: a new class default.
        const Candidate *one = nullptr;
        double one_g = 0;
        for (const Candidate &c : w.candidates) {
            std::vector<double> ms, r;
            if (!candidate_times(w, c.id(), &ms)) continue;
            for (size_t i = 0; i < ms.size(); i++)
                if (std::isfinite(peer_ms[w.problems[i].key])) r.push_back(peer_ms[w.problems[i].key] / ms[i]);
            const double g = geomean(r);
            if (std::isfinite(g) && g > one_g) one_g = g, one = &c;
        }
        std::vector<double> rb;
        for (const Problem &pr : w.problems)
            if (baseline_ms.count(pr.key) && std::isfinite(peer_ms[pr.key])) rb.push_back(peer_ms[pr.key] / baseline_ms[pr.key]);
        std::printf("%-44s %5zu %8.2fx %8.2fx %8.2fx %8.2fx  %s\n", ck.c_str(), w.problems.size(), geomean(rd), geomean(rt),
                    one ? one_g : NAN, rb.size() == w.problems.size() ? geomean(rb) : NAN,
                    o.peer.empty() ? "(no peer)" : o.peer.c_str());
        if (one && one_g > geomean(rd) * 1.03) {
            int order = 0;  // just before the kernel the library chose for the class's first problem
            for (const ManifestRecord &m : manifest)
                if (m.name == default_kernel[w.problems[0].key]) order = std::max(0, m.order - 1);
            const std::string knobs = print_knobs(one->knobs, nullptr, /*only_changed=*/true);
            char line[512];
            std::snprintf(line, sizeof line, "%-27s %-5s %-6s %-6s %-6s %-6s default %-6d %s   # %s: %.2fx -> %.2fx %s",
                          one->family->name, to_string(w.cls.cls.dtype), to_string(w.cls.cls.layout),
                          to_string(w.cls.cls.stride), to_string(w.cls.cls.filter), to_string(w.cls.cls.device), order,
                          knobs.c_str(), one->kernel.c_str(), geomean(rd), one_g, o.peer.c_str());
            // A general family's kernel that won a narrow or depthwise class: as a class default it
            // would take every layer of its (stride, filter) class, not only this group class's;
            // printed commented out, for the tuning database (which names the problems) to keep.
            if (w.cls.groups != GroupClass::Any && one->family->groups == GroupClass::Any)
                manifest_lines.push_back(std::string("# ") + line + " (a general family's kernel: as a default it would take "
                                         "every layer of the class; the tuning database keeps it for these problems)");
            else
                manifest_lines.push_back(line);
        }
    }
    if (o.no_promote) {
        std::printf("\nresults in %s (--no-promote: run --promote-only where the modules' objects are)\n", o.results.c_str());
        draw_chart(o.results);
        return 0;
    }
    std::printf("\nwrote %s (%zu records%s)\n", o.out.c_str(), wins.size(),
                module_kernels.empty() ? "" : (", module " + module_name + " of " + std::to_string(module_kernels.size()) + " kernels").c_str());
    std::printf("use it now:   convbwd-driver --tuning-db %s ...   or   CONVBWD_TUNING_DB=%s <program>\n", o.out.c_str(),
                o.out.c_str());
    if (!manifest_lines.empty()) {
        std::printf("to make a winner a class default, add to schedules/kernels.manifest and rebuild:\n");
        for (const std::string &l : manifest_lines) std::printf("  %s\n", l.c_str());
    }
    draw_chart(o.results);
    return 0;
}
