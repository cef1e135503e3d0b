// Allocation failures inside the library: every C entry point returns CONVBWD_ALLOC_FAILED with
// a message, never lets std::bad_alloc cross the C boundary (which terminates a C caller), and
// writes nothing. The n-th operator new of a call is made to fail, for every n until the call
// completes with no failure injected. Its own executable: it replaces the global operator new.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <random>
#include <string>
#include <vector>

#include <convbwd/convbwd.h>

namespace {
std::atomic<long> g_countdown{-1};  // < 0: no failure armed; 0: the next operator new throws
std::atomic<bool> g_fired{false};

void *checked_alloc(std::size_t n) {
    if (g_countdown.load(std::memory_order_relaxed) >= 0 && g_countdown.fetch_sub(1) == 0) {
        g_fired = true;
        throw std::bad_alloc();
    }
    void *p = std::malloc(n ? n : 1);
    if (!p) throw std::bad_alloc();
    return p;
}
}  // namespace

void *operator new(std::size_t n) { return checked_alloc(n); }
void *operator new[](std::size_t n) { return checked_alloc(n); }
void operator delete(void *p) noexcept { std::free(p); }
void operator delete[](void *p) noexcept { std::free(p); }
void operator delete(void *p, std::size_t) noexcept { std::free(p); }
void operator delete[](void *p, std::size_t) noexcept { std::free(p); }

namespace {

convbwd_problem problem() {
    convbwd_problem p{};
    p.n = 2, p.c = 8, p.h = 9, p.w = 9, p.k = 8, p.r = 3, p.s = 3, p.groups = 1;
    p.pad_top = p.pad_bottom = p.pad_left = p.pad_right = 1;
    p.stride_h = p.stride_w = p.dilation_h = p.dilation_w = 1;
    return p;
}

// Calls `call` with the n-th allocation failing, n = 0, 1, ... until a call completes with no
// failure injected. Each failed call must say CONVBWD_ALLOC_FAILED and leave `out` as it was;
// returns how many calls met an injected failure.
template <class Call>
int sweep(const char *what, Call call, std::vector<float> *out, bool check_message = true) {
    int failures = 0;
    for (long n = 0; n < 100000; n++) {
        if (out) std::fill(out->begin(), out->end(), NAN);
        g_fired = false;
        g_countdown = n;
        convbwd_status s = CONVBWD_SUCCESS;
        bool threw = false;
        try {
            s = call();
        } catch (...) {
            threw = true;
        }
        g_countdown = -1;
        const std::string label = std::string(what) + ", allocation " + std::to_string(n) + " failing";
        INFO(label);
        REQUIRE_FALSE(threw);  // nothing may cross the C boundary
        if (!g_fired) {
            CHECK(s == CONVBWD_SUCCESS);
            return failures;
        }
        failures++;
        // The failure was either caught inside (a fallback path) or reported as such.
        if (s != CONVBWD_SUCCESS) {
            const std::string message = convbwd_last_error();
            INFO("status " << (int)s << ": " << message);
            CHECK(s == CONVBWD_ALLOC_FAILED);
            if (check_message) CHECK(message.find("out of host memory") != std::string::npos);
            if (out)
                for (float v : *out) REQUIRE(std::isnan(v));  // nothing written
        }
    }
    FAIL("the call never completed");
    return failures;
}

}  // namespace

TEST_CASE("alloc: every C entry point turns a failed allocation into CONVBWD_ALLOC_FAILED") {
    const convbwd_problem p = problem();
    const int64_t P = p.h, Q = p.w;  // stride 1, pad 1, 3x3
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> u(-1, 1);
    std::vector<float> x(p.n * p.c * p.h * p.w), dy(p.n * p.k * P * Q), w(p.k * p.c * p.r * p.s);
    for (auto *v : {&x, &dy, &w})
        for (float &e : *v) e = u(rng);
    std::vector<float> dx(x.size()), dw(w.size());
    convbwd_tensor tx{x.data(), CONVBWD_F32, CONVBWD_NHWC, {}}, tdy{dy.data(), CONVBWD_F32, CONVBWD_NHWC, {}},
        tw{w.data(), CONVBWD_F32, CONVBWD_NHWC, {}}, tdx{dx.data(), CONVBWD_F32, CONVBWD_NHWC, {}},
        tdw{dw.data(), CONVBWD_F32, CONVBWD_NHWC, {}};

    int total = 0;
    total += sweep("convbwd_bwd_data", [&] { return convbwd_bwd_data(&p, &tdy, &tw, &tdx, 1.f, 0.f, nullptr); }, &dx);
    total += sweep("convbwd_bwd_weight", [&] { return convbwd_bwd_weight(&p, &tx, &tdy, &tdw, 1.f, 0.f, nullptr); }, &dw);
    const char *name = nullptr;
    total += sweep("convbwd_select_kernel", [&] {
        return convbwd_select_kernel(&p, CONVBWD_BWD_DATA, CONVBWD_F32, CONVBWD_NHWC, nullptr, &name);
    }, nullptr);
    size_t bytes = 0;
    total += sweep("convbwd_workspace_size", [&] {
        return convbwd_workspace_size(&p, CONVBWD_BWD_WEIGHT, CONVBWD_F32, CONVBWD_NHWC, nullptr, &bytes);
    }, nullptr);
    char key[512];
    total += sweep("convbwd_problem_key", [&] {
        return convbwd_problem_key(&p, CONVBWD_BWD_DATA, CONVBWD_F32, CONVBWD_NHWC, nullptr, key, sizeof key);
    }, nullptr);
    convbwd_kernel_desc desc;
    total += sweep("convbwd_kernel_info", [&] { return convbwd_kernel_info(0, &desc); }, nullptr);

    // A tuning database whose load fails part-way changes nothing: the selection stays.
    const char *before = nullptr;
    REQUIRE(convbwd_select_kernel(&p, CONVBWD_BWD_DATA, CONVBWD_F32, CONVBWD_NHWC, nullptr, &before) == CONVBWD_SUCCESS);
    const std::string chosen = before;
    const std::string path = "alloc_faults_tuning.db";
    FILE *f = std::fopen(path.c_str(), "w");
    REQUIRE(f);
    std::fprintf(f, "# a comment\n%s %s\n", key, chosen.c_str());
    std::fclose(f);
    total += sweep("convbwd_load_tuning_db", [&] {
        convbwd_status s = convbwd_load_tuning_db(path.c_str());
        const std::string message = convbwd_last_error();
        const char *now = nullptr;
        const long armed = g_countdown.exchange(-1);
        REQUIRE(convbwd_select_kernel(&p, CONVBWD_BWD_DATA, CONVBWD_F32, CONVBWD_NHWC, nullptr, &now) == CONVBWD_SUCCESS);
        g_countdown = armed;
        CHECK(chosen == now);
        if (s != CONVBWD_SUCCESS) CHECK(message.find("out of host memory") != std::string::npos);
        return s;
    }, nullptr, /*check_message=*/false);  // checked inside: the selection after it clears it
    std::remove(path.c_str());
    MESSAGE("calls that met an injected allocation failure: " << total);
    CHECK(total > 20);  // the sweeps reached the library's allocations
}
