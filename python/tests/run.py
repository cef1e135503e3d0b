"""Runs the Python package's tests (ctest entry `torch`; scripts/gpu_torch.sh on the GPU machine).

    python python/tests/run.py [--require-torch] [unittest names...]

Without PyTorch only test_capi runs, and the run prints [SKIP] (ctest counts it as skipped) unless
--require-torch says PyTorch must be there (the set-up installed it): then its absence fails.
Any other import failure of torch fails the run. Prints the library, PyTorch and device used.
"""
import os
import sys
import unittest

here = os.path.dirname(os.path.abspath(__file__))


def main(argv):
    require = "--require-torch" in argv
    names = [a for a in argv if not a.startswith("--")]
    sys.path.insert(0, here)
    import convbwd
    print(f"convbwd: {convbwd.library_path()} (host ISA {convbwd.host_isa()}, {len(convbwd.kernels())} kernels)")
    try:
        import torch
    except ModuleNotFoundError as e:
        if e.name != "torch":
            raise
        torch = None
        if require:
            print(f"FAIL: PyTorch is required here but `import torch` failed: {e} ({sys.executable})")
            return 1
    loader = unittest.TestLoader()
    if names:
        suite = loader.loadTestsFromNames(names)
    elif torch is None:
        suite = loader.loadTestsFromName("test_capi")
    else:
        print(f"torch {torch.__version__} from {os.path.dirname(torch.__file__)}; "
              f"device {os.environ.get('CONVBWD_TEST_DEVICE', 'cpu')}")
        suite = unittest.TestSuite([loader.loadTestsFromName("test_capi"), loader.loadTestsFromName("test_torch")])
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    print(f"tests run: {result.testsRun}, failures: {len(result.failures)}, errors: {len(result.errors)}, "
          f"skipped: {len(result.skipped)}")
    if not result.wasSuccessful():
        return 1
    if torch is None:
        print("[SKIP] PyTorch is not installed: the convbwd.torch tests did not run (test_capi did)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
