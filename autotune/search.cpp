#include "autotune/search.h"

#include <cstring>

namespace convbwd::tune {

std::string ProblemClass::key() const {
    return std::string(to_string(cls.dir)) + "-" + to_string(cls.dtype) + "-" + to_string(cls.layout) + "-" +
           to_string(cls.stride) + "-" + to_string(cls.filter) + "-" + to_string(groups) + "-" + to_string(cls.device);
}

ProblemClass class_of(const ConvProblem &p, Direction dir, Device device) {
    ProblemClass c;
    c.cls.dir = dir;
    c.cls.dtype = p.dtype;
    c.cls.layout = p.layout;
    c.cls.stride = stride_class(p);
    c.cls.filter = filter_class(p);
    c.cls.device = device;
    c.groups = group_class(p);
    return c;
}

std::vector<const Family *> families_for(const ProblemClass &c) {
    std::vector<const Family *> own, general;
    for (const Family &f : families()) {
        if (f.dir != c.cls.dir || f.kind != schedule_kind(c.cls.device)) continue;
        if (std::strstr(f.name, "scatter") || f.autoscheduler) continue;  // comparison baselines
        // A family whose space has no valid point for the class (the matrix-fragment family for
        // f32 or NCHW) would only waste the search's draws.
        KnobValues probe;
        Rng rng(1);
        if (!random_point(c, f, rng, &probe)) continue;
        if (f.groups == c.groups) own.push_back(&f);
        else if (f.groups == GroupClass::Any) general.push_back(&f);
    }
    if (own.empty()) return general;
    // A family of one group (the GPU first-layer family) cannot take the class's grouped problems
    // (ResNeXt's 4 channels a group are narrow too): the general families search beside it.
    for (const Family *f : own)
        if (takes_one_group(*f)) {
            own.insert(own.end(), general.begin(), general.end());
            break;
        }
    return own;
}

Candidate make_candidate(const ProblemClass &c, const Family &f, const KnobValues &v) {
    Candidate k;
    k.family = &f;
    k.knobs = v;
    k.kernel = kernel_name(c.cls.dir, c.cls.dtype, c.cls.layout, c.cls.stride, c.cls.filter, c.cls.device, kernel_tag(v));
    const KnobKind launch = KnobKind::Launch;
    k.launch = print_knobs(v, &launch);
    return k;
}

uint64_t seed_for(uint64_t seed, const std::string &what) {
    uint64_t h = 1469598103934665603ull ^ (seed * 0x9E3779B97F4A7C15ull);
    for (unsigned char ch : what) h = (h ^ ch) * 1099511628211ull;
    return h;
}

bool random_point(const ProblemClass &c, const Family &f, Rng &rng, KnobValues *out) {
    for (int attempt = 0; attempt < 2000; attempt++) {
        KnobValues v = default_values(f);
        const std::vector<Knob> &knobs = f.knobs();
        for (size_t i = 0; i < knobs.size(); i++) v.v[i] = knobs[i].domain[rng.below(knobs[i].domain.size())];
        if (valid(v, c.cls).empty()) return (*out = v, true);
    }
    return false;
}

bool mutate_point(const ProblemClass &c, const KnobValues &v, Rng &rng, KnobValues *out, bool launch_only) {
    const std::vector<Knob> &knobs = v.family->knobs();
    std::vector<size_t> movable;
    for (size_t i = 0; i < knobs.size(); i++)
        if (!launch_only || knobs[i].kind == KnobKind::Launch) movable.push_back(i);
    if (movable.empty()) return false;
    for (int attempt = 0; attempt < 200; attempt++) {
        KnobValues m = v;
        const int moves = rng.below(3) == 0 ? 2 : 1;
        for (int j = 0; j < moves; j++) {
            const size_t i = movable[rng.below(movable.size())];
            const std::vector<int> &d = knobs[i].domain;
            if (d.size() < 2) continue;
            size_t at = 0;
            while (at < d.size() && d[at] != m.v[i]) at++;
            if (rng.below(4) == 0 || at == d.size()) {
                m.v[i] = d[rng.below(d.size())];
            } else {  // one step up or down
                const bool up = at == 0 || (at + 1 < d.size() && rng.below(2) == 0);
                m.v[i] = d[up ? at + 1 : at - 1];
            }
        }
        if (m.v != v.v && valid(m, c.cls).empty()) return (*out = m, true);
    }
    return false;
}

}  // namespace convbwd::tune
