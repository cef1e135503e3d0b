// extract_opencl IN.halide_generated.cpp OUT.cl [PRELUDE.cl]
// Pulls the OpenCL C of all kernels of a Halide pipeline out of its C++ output (the c_source
// output for an OpenCL target keeps it as a raw string literal) and drops its trailing NUL. A
// prelude (the matrix fragments' definitions, generators/fragments/) goes in front of it.
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

int main(int argc, char **argv) {
    if (argc != 3 && argc != 4) {
        std::fprintf(stderr, "usage: extract_opencl IN.halide_generated.cpp OUT.cl [PRELUDE.cl]\n");
        return 2;
    }
    std::ifstream in(argv[1], std::ios::binary);
    std::stringstream buf;
    buf << in.rdbuf();
    const std::string text = buf.str(), open = "R\"BUFCHARSOURCE(", close = ")BUFCHARSOURCE\"";
    size_t b = text.find(open), e = text.find(close);
    if (!in || b == std::string::npos || e == std::string::npos || e < b) {
        std::fprintf(stderr, "extract_opencl: no OpenCL source in %s\n", argv[1]);
        return 1;
    }
    std::string src = text.substr(b + open.size(), e - b - open.size());
    while (!src.empty() && src.back() == '\0') src.pop_back();
    std::string prelude;
    if (argc == 4) {
        std::ifstream p(argv[3], std::ios::binary);
        std::stringstream pb;
        pb << p.rdbuf();
        if (!p) {
            std::fprintf(stderr, "extract_opencl: cannot read the prelude %s\n", argv[3]);
            return 1;
        }
        prelude = "// Prelude: " + std::string(argv[3]) + "\n" + pb.str() + "\n";
    }
    std::ofstream out(argv[2], std::ios::binary);
    out << "// Generated from " << argv[1] << " by tools/amdgpu/extract_opencl: do not edit.\n" << prelude << src;
    return out ? 0 : 1;
}
