// A render thread's command stream, as a C++ engine builds it: alignas(32)
// command structs (SIMD members) constructed in place in the ring with
// shared_ring_claim_aligned, read back in place by the consumer through a
// pointer to the struct. Built with UBSan's alignment check: a command at
// an address that is not 32-aligned aborts the run. Between the commands,
// messages of odd lengths move the ring's position off any alignment.
//   usage: aligned_commands [COUNT]
#define SHARED_RING_IMPLEMENTATION
#include "../shared_ring.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <thread>

namespace {

struct alignas(32) Command {
    float matrix[8];  // a 256-bit vector register's worth
    std::uint64_t seq;
    std::uint32_t kind;
    std::uint32_t check;
};
static_assert(alignof(Command) == 32, "the point of the test");

constexpr std::size_t kCapacity = 1u << 14;
alignas(128) unsigned char region[SHARED_RING_HEADER_SIZE + kCapacity];

std::uint32_t check_of(const Command &c) {
    std::uint32_t h = static_cast<std::uint32_t>(c.seq) * 2654435761u ^ c.kind;
    for (float f : c.matrix) h = h * 31u + static_cast<std::uint32_t>(f);
    return h;
}

struct Tally {
    std::uint64_t commands = 0, notes = 0, bad = 0;
};

int on_message(void *user, const void *data, std::size_t len) {
    Tally &t = *static_cast<Tally *>(user);
    if (len == sizeof(Command)) {
        // UBSan checks the alignment of this reference's uses
        const Command &c = *static_cast<const Command *>(data);
        if (c.seq != t.commands || c.check != check_of(c) ||
            reinterpret_cast<std::uintptr_t>(&c) % alignof(Command) != 0)
            t.bad++;
        t.commands++;
    } else {
        if (len != 1 + t.notes % 23) t.bad++;
        t.notes++;
    }
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    const std::uint64_t count = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 200000;
    const std::size_t size = shared_ring_region_size(kCapacity, 0);
    shared_ring_producer p{};
    shared_ring_consumer c{};
    Tally t;
    if (shared_ring_format(region, size, kCapacity, 0) != SHARED_RING_OK ||
        shared_ring_attach_producer(&p, region, size, nullptr) != SHARED_RING_OK ||
        shared_ring_attach_consumer(&c, region, size, nullptr) != SHARED_RING_OK)
        return 2;
    std::thread render([&] {
        while (shared_ring_read(&c, on_message, &t, SHARED_RING_FOREVER) >= 0) {
        }
    });
    for (std::uint64_t i = 0; i < count; i++) {
        void *slot = nullptr;
        char note[24] = "odd-length note";
        if (shared_ring_claim_aligned(&p, sizeof(Command), alignof(Command), &slot,
                                      SHARED_RING_FOREVER) != SHARED_RING_OK)
            return 3;
        Command *cmd = new (slot) Command{};
        for (int k = 0; k < 8; k++) cmd->matrix[k] = static_cast<float>(i % 1000 + k);
        cmd->seq = i;
        cmd->kind = static_cast<std::uint32_t>(i % 7);
        cmd->check = check_of(*cmd);
        if (shared_ring_commit(&p, sizeof(Command)) != SHARED_RING_OK) return 4;
        if (shared_ring_write_bytes(&p, note, 1 + i % 23, SHARED_RING_FOREVER) != SHARED_RING_OK)
            return 5;
    }
    shared_ring_close(&p);
    render.join();
    std::printf("aligned_commands: %llu commands, %llu notes, %llu bad\n",
                static_cast<unsigned long long>(t.commands),
                static_cast<unsigned long long>(t.notes), static_cast<unsigned long long>(t.bad));
    return t.commands == count && t.notes == count && t.bad == 0 ? 0 : 1;
}
