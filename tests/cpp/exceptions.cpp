// Throws and catches C++ exceptions under the library: one in main, and one
// from an nftw callback, so it unwinds through libc's nftw and the
// library's nftw hook before main catches it. Prints what it caught; when
// nftw returns instead, prints its result and errno.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ftw.h>
#include <stdexcept>
#include <string>

static int visit(const char *path, const struct stat *, int, struct FTW *) {
    throw std::runtime_error(std::string("from callback ") + path);
}

int main(int argc, char **argv) {
    try {
        throw std::runtime_error("plain");
    } catch (const std::exception &e) {
        std::printf("caught %s\n", e.what());
    }
    if (argc > 1) {
        try {
            int r = nftw(argv[1], visit, 4, FTW_PHYS);
            std::printf("nftw returned %d errno %s\n", r, std::strerror(errno));
        } catch (const std::exception &e) {
            std::printf("caught %s\n", e.what());
        }
    }
    return 0;
}
