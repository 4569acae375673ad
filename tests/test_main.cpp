// The test runner. CTest runs one test case per process; a case that lacks what it needs
// (a corpus folder, a capability of this build) calls stztest::skip_test, which exits with
// kSkipExitCode so that CTest reports it as skipped, never as passed. Failures exit with 1
// (Catch would return the count of failed assertions, which could collide with the skip code).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

int main(int argc, char** argv) {
    const int failed = Catch::Session().run(argc, argv);
    return failed ? 1 : 0;
}
