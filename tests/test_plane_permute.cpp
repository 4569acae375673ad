// The planes codec's transposition of quant blocks in storage order (plane_split_permute.cpp):
// each head byte of every block to a plane of its own, the rest of the block to the payload
// plane, and back, for every block layout the parsers know and others, at block counts around
// the eight blocks the x86 path moves at a time; nothing written outside the elements.
#include <catch2/catch.hpp>
#include <random>

#include "codecs/plane_split.hpp"

using namespace stz;

namespace {

struct Layout {
    uint32_t width, head;
};

}  // namespace

TEST_CASE("planes move quant blocks in storage order to their planes and back", "[codec][planes]") {
    std::mt19937_64 g(7);
    for (Layout L : {Layout{18, 2}, Layout{34, 2}, Layout{20, 4}, Layout{22, 6}, Layout{24, 8}, Layout{26, 10},
                     Layout{9, 8}, Layout{8, 8}, Layout{12, 3}, Layout{40, 16}})
        for (uint64_t n : {0, 1, 7, 8, 9, 15, 16, 17, 23, 100}) {
            INFO("width " << L.width << ", head " << L.head << ", " << n << " blocks");
            planes::PlanesParams P;
            P.channel_major = false, P.blocks = true, P.width = L.width, P.head = L.head;
            const planes::Geometry geo = planes::geometry(P, n * L.width);
            REQUIRE(geo.body == n * L.width);
            Bytes elems(n * L.width);
            for (auto& b : elems) b = static_cast<uint8_t>(g());
            // The planes as the format defines them, byte by byte.
            std::vector<Bytes> expected(geo.fields.size());
            for (size_t p = 0; p < geo.fields.size(); ++p)
                for (uint64_t i = 0; i < n; ++i)
                    for (uint32_t k = 0; k < geo.fields[p].width; ++k)
                        expected[p].push_back(elems[i * L.width + geo.fields[p].start + k]);
            // Each plane with a guard after it, in one buffer.
            constexpr size_t kGuard = 16;
            Bytes planes_buf;
            std::vector<size_t> at;
            for (size_t p = 0; p < geo.fields.size(); ++p) {
                at.push_back(planes_buf.size());
                planes_buf.resize(planes_buf.size() + geo.plane_size(p) + kGuard, 0xa5);
            }
            std::vector<uint8_t*> plane;
            for (size_t a : at) plane.push_back(planes_buf.data() + a);
            Bytes in = elems;
            planes::permute<true>(in.data(), plane.data(), P, geo);
            CHECK(in == elems);
            for (size_t p = 0; p < geo.fields.size(); ++p) {
                CHECK(Bytes(plane[p], plane[p] + geo.plane_size(p)) == expected[p]);
                CHECK(std::all_of(plane[p] + geo.plane_size(p), plane[p] + geo.plane_size(p) + kGuard,
                                  [](uint8_t x) { return x == 0xa5; }));
            }
            Bytes back(n * L.width + kGuard, 0x5a);
            planes::permute<false>(back.data(), plane.data(), P, geo);
            CHECK(Bytes(back.begin(), back.begin() + static_cast<std::ptrdiff_t>(n * L.width)) == elems);
            CHECK(std::all_of(back.end() - kGuard, back.end(), [](uint8_t x) { return x == 0x5a; }));
        }
}
