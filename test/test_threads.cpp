// Thread safety: the C API called from many threads at once, as a framework's data-parallel
// workers would, while another thread replaces the tuning database. Run by ctest (threads) and,
// with the library instrumented, under ThreadSanitizer by scripts/sanitize.sh. Checks that each
// thread's results are right and that convbwd_last_error() is per thread.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/harness.h"
#include "common/shapes.h"

using namespace convbwd;

TEST_CASE("threads: concurrent calls, a tuning database replaced meanwhile, per-thread errors") {
    const int kThreads = 4, kIters = 6;
    const std::vector<ConvProblem> problems = {
        with_derived_output(ConvProblem{.N = 2, .C = 8, .H = 9, .W = 9, .K = 8, .R = 3, .S = 3, .pad_top = 1,
                                        .pad_bottom = 1, .pad_left = 1, .pad_right = 1}),
        with_derived_output(ConvProblem{.N = 1, .C = 6, .H = 7, .W = 11, .K = 6, .R = 3, .S = 3, .G = 6,
                                        .pad_top = 1, .pad_bottom = 1, .pad_left = 1, .pad_right = 1,
                                        .stride_h = 2, .stride_w = 2}),
        with_derived_output(ConvProblem{.N = 2, .C = 16, .H = 5, .W = 5, .K = 4, .R = 1, .S = 1}),
    };
    // A database naming, for the first problem, the kernel the dispatcher would pick anyway (so
    // every thread's result is checkable whichever database is loaded when it dispatches).
    convbwd_problem c0 = to_c(problems[0]);
    char key[256];
    const char *kernel = nullptr;
    REQUIRE(convbwd_problem_key(&c0, CONVBWD_BWD_DATA, CONVBWD_F32, CONVBWD_NCHW, nullptr, key, sizeof key) ==
            CONVBWD_SUCCESS);
    REQUIRE(convbwd_select_kernel(&c0, CONVBWD_BWD_DATA, CONVBWD_F32, CONVBWD_NCHW, nullptr, &kernel) ==
            CONVBWD_SUCCESS);
    const std::string db = "threads_tuning.db";
    {
        FILE *f = std::fopen(db.c_str(), "w");
        REQUIRE(f);
        std::fprintf(f, "# threads test\n%s %s\n", key, kernel);
        std::fclose(f);
    }

    std::atomic<int> failures{0}, runs{0};
    std::atomic<bool> done{false};
    std::vector<std::string> first_failure(kThreads);
    std::vector<std::thread> workers;
    for (int t = 0; t < kThreads; t++)
        workers.emplace_back([&, t] {
            std::mt19937 rng(100 + t);
            for (int i = 0; i < kIters; i++) {
                for (const ConvProblem &p : problems)
                    for (Direction d : {Direction::BwdData, Direction::BwdWeight}) {
                        RunSpec s;
                        s.p = p, s.dir = d;
                        s.p.layout = (i + t) % 2 ? Layout::NHWC : Layout::NCHW;
                        const RunResult r = run_case(s, rng);
                        runs++;
                        if (!r.ok(s)) {
                            if (failures++ == 0 || first_failure[t].empty())
                                first_failure[t] = r.kernel + ": " + r.error + r.verify.first_bad;
                        }
                    }
                // A bad call on this thread: its message is this thread's, whatever the others do.
                convbwd_problem bad = to_c(problems[0]);
                bad.stride_h = -1 - t;
                const char *name = nullptr;
                if (convbwd_select_kernel(&bad, CONVBWD_BWD_DATA, CONVBWD_F32, CONVBWD_NCHW, nullptr, &name) !=
                        CONVBWD_BAD_PARAM ||
                    std::strstr(convbwd_last_error(), ("stride_h = " + std::to_string(-1 - t)).c_str()) == nullptr) {
                    failures++;
                    first_failure[t] = std::string("last error not this thread's: ") + convbwd_last_error();
                }
            }
        });
    std::thread loader([&] {  // replaces the tuning database while the workers dispatch
        for (int i = 0; !done; i++) {
            if (convbwd_load_tuning_db(i % 2 ? db.c_str() : nullptr) != CONVBWD_SUCCESS) failures++;
            convbwd_kernel_desc desc;
            if (convbwd_kernel_info(i % convbwd_kernel_count(), &desc) != CONVBWD_SUCCESS) failures++;
            std::this_thread::yield();
        }
    });
    for (auto &w : workers) w.join();
    done = true;
    loader.join();
    convbwd_load_tuning_db(nullptr);
    std::remove(db.c_str());
    for (int t = 0; t < kThreads; t++)
        if (!first_failure[t].empty()) MESSAGE("thread " << t << ": " << first_failure[t]);
    CHECK(failures == 0);
    CHECK(runs == kThreads * kIters * (int)problems.size() * 2);
}
