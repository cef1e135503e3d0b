// The load-time rewrite of runtime/src/cuda_fragments.cpp as a command: a Halide PTX file whose
// fragment calls (convbwd_mma16x8x16_*) become mma.sync, as the runtime hands it to the driver, so that
// ptxas can compile it apart (tools/ptx_info/ptx_info.sh).
//   convbwd_ptx_fragments IN.ptx OUT.ptx [MAXNREG [ALIGNED_LOAD_BYTES [COPIES_AHEAD]]]   (MAXNREG: the
//   entries' .maxnreg, as the runtime's CONVBWD_FRAGMENT_MAXNREG; default the runtime's,
//   kFragmentMaxRegisters; 0: none; -: the default. ALIGNED_LOAD_BYTES and COPIES_AHEAD (0 or 1): the
//   kernel's traits the runtime passes to rewrite_fragment_copies, input_channel_vector() x 2 and
//   copies_ahead(); default 0. CONVBWD_FRAGMENT_COPIES as the runtime reads it.)
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "runtime/src/cuda_fragments.h"

int main(int argc, char **argv) {
    if (argc < 3 || argc > 6) {
        std::fprintf(stderr, "usage: %s IN.ptx OUT.ptx [MAXNREG [ALIGNED_LOAD_BYTES [COPIES_AHEAD]]]\n", argv[0]);
        return 2;
    }
    std::ifstream in(argv[1]);
    if (!in) {
        std::fprintf(stderr, "%s: cannot read\n", argv[1]);
        return 1;
    }
    std::stringstream text;
    text << in.rdbuf();
    const std::optional<convbwd::FragmentCopies> copies =
        convbwd::fragment_copies(std::getenv("CONVBWD_FRAGMENT_COPIES"));
    if (!copies) {
        std::fprintf(stderr, "CONVBWD_FRAGMENT_COPIES: not %s\n", convbwd::kFragmentCopiesNames);
        return 2;
    }
    std::string error;
    std::string out = convbwd::inline_cuda_fragments(text.str(), &error,
                                                     argc >= 4 && std::string(argv[3]) != "-" ? std::atoi(argv[3]) : convbwd::kFragmentMaxRegisters);
    if (!out.empty())
        out = convbwd::rewrite_fragment_copies(out, argc >= 5 ? std::atoi(argv[4]) : 0, *copies,
                                               argc == 6 && std::atoi(argv[5]) != 0);
    if (out.empty()) {
        std::fprintf(stderr, "%s: %s\n", argv[1], error.c_str());
        return 1;
    }
    std::ofstream(argv[2]) << out;
    return 0;
}
