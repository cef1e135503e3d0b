// The search over schedule spaces (schedules/spaces.h): problems grouped by class, each class's
// families, and a seeded, reproducible sequence of candidates (points of a family's space, valid()
// for the class) in rounds: round 0 samples the space at random; each later round mutates the
// best candidates measured so far (one or two knobs moved to a neighbouring or a random value of
// their domain). A point is never proposed twice, and never an invalid one.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "generators/conv_problem.h"
#include "schedules/spaces.h"

namespace convbwd::tune {

// What one candidate serves: problems of one direction, dtype, layout, stride and filter class,
// group class and device.
struct ProblemClass {
    KernelClass cls;
    GroupClass groups = GroupClass::Any;
    std::string key() const;  // "bwd_weight-f32-nhwc-s1-k3-any-host"
};
ProblemClass class_of(const ConvProblem &p, Direction dir, Device device);

// The families whose kernels serve a class (its group class's own, else the general one; both
// where an own family takes one group only), without the comparison baselines.
std::vector<const Family *> families_for(const ProblemClass &c);

struct Candidate {
    const Family *family = nullptr;
    KnobValues knobs;     // every knob: compile-time (the kernel) and launch-time (the call)
    std::string kernel;   // the name derived from the class and the compile-time knobs
    std::string launch;   // the launch-time knobs, key=value
    int round = 0, index = 0;
    std::string id() const { return launch.empty() ? kernel : kernel + " " + launch; }
};
Candidate make_candidate(const ProblemClass &c, const Family &f, const KnobValues &v);

// Deterministic draws (mt19937_64 with our own reduction: the same numbers on every library).
class Rng {
public:
    explicit Rng(uint64_t seed) : g_(seed) {}
    uint64_t below(uint64_t n) { return n ? g_() % n : 0; }

private:
    std::mt19937_64 g_;
};
uint64_t seed_for(uint64_t seed, const std::string &what);  // FNV-1a of what, mixed with seed

// A random valid point of family f for class c (nullopt-like: false if none found in many tries).
bool random_point(const ProblemClass &c, const Family &f, Rng &rng, KnobValues *out);
// A neighbour of v: one knob (sometimes two) moved one step in its domain or to a random value.
// launch_only: only launch-time knobs move (the same kernel, so no build; false where the family
// has none).
bool mutate_point(const ProblemClass &c, const KnobValues &v, Rng &rng, KnobValues *out, bool launch_only = false);

}  // namespace convbwd::tune
