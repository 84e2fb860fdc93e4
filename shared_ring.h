/* shared_ring.h - v0.2.0 - single-producer single-consumer message ring over caller-supplied
   (shared) memory. MIT license, see the end of this file.
   Home: the repository or tarball this file came from (README.md, docs/).

   One producer hands variable-length messages to one consumer through a lock-free ring buffer in
   memory you supply: a static array, a malloc'd block shared by two threads, or a
   shm_open/memfd/file mapping shared by two processes (one may be 32-bit, the other 64-bit). It
   never allocates. Each message is contiguous and 8-byte aligned: the consumer reads it in place.
   In exactly one C or C++ file:
       #define SHARED_RING_IMPLEMENTATION
       #include "shared_ring.h"
   and include the header without the define everywhere else.

   ============================================================================
   1. THE API ON ONE SCREEN (p: producer handle, c: consumer handle, ns: a timeout in nanoseconds,
   0 = do not wait, SHARED_RING_FOREVER; every int result is a shared_ring_result, >= 0 on success)
   ============================================================================
   Set up (either side):
     shared_ring_region_size(capacity, max_message)     bytes to allocate
     shared_ring_format(region, size, capacity, max_message)   empty ring
     shared_ring_prepare(region, size, capacity, max_message, region_fd)  format unless in use
     shared_ring_attach_producer(&p, region, size, &options or NULL)
     shared_ring_attach_consumer(&c, region, size, &options or NULL)
     shared_ring_attach_producer_wait(..., ns)  shared_ring_attach_consumer_wait(..., ns)
     shared_ring_detach_producer(&p) / shared_ring_detach_consumer(&c)
     shared_ring_adopt_producer(&p) / shared_ring_adopt_consumer(&c)  in a forked child
   Producer:
     shared_ring_write_bytes(&p, data, len, ns)         copy one message in
     shared_ring_write_str(&p, str, ns)                 a C string, without its 0
     shared_ring_write(&p, max_len, fill, user, ns)     fill in place, callback
     shared_ring_claim(&p, len, &ptr, ns) + shared_ring_commit(&p, len) or
       shared_ring_abort(&p)                            zero-copy
     shared_ring_claim_aligned(&p, len, align, &ptr, ns)  16/32/64-aligned
     shared_ring_cork(&p) / shared_ring_uncork(&p) / shared_ring_flush(&p)
     shared_ring_close(&p)                              end of stream
     shared_ring_producer_peer_fd(&p)                   readable when the consumer dies
   Consumer:
     shared_ring_read(&c, fn, user, ns)                 wait, then read a batch
     shared_ring_read_some(&c, fn, user)                read what is there now
     shared_ring_wait(&c, ns)                           wait for a message
     shared_ring_peek(&c, &msg) + shared_ring_release(&c)   pull, in place
     shared_ring_wait_any(rings, n, ns)                 many rings, one sleep
     shared_ring_arm(&c)                                before an event loop sleeps
     shared_ring_consumer_peer_fd(&c)                   readable when the producer dies
   Either side, anything:
     shared_ring_result_string(r)  shared_ring_why()    what went wrong
     shared_ring_producer_stats  shared_ring_consumer_stats  shared_ring_producer_usage
     shared_ring_consumer_usage  shared_ring_producer_max_message
     shared_ring_consumer_max_message                   counters, fill, limits
     shared_ring_owners_of(region, size, region_fd, &owners)  who is attached
     shared_ring_default_options()  shared_ring_wait_method()
   Shared memory (define SHARED_RING_SHM):
     shared_ring_shm_open(&shm, name, size, ns)  shared_ring_shm_anonymous(&shm, size)
     shared_ring_shm_map_fd(&shm, fd)  shared_ring_shm_close(&shm)  shared_ring_shm_unlink(name)
     shared_ring_shm_prefault(&shm)
   Event-loop descriptors (define SHARED_RING_NOTIFIER):
     shared_ring_notifier_open(&n)  shared_ring_notifier_options(&n, end, &options)
     shared_ring_notifier_clear(&n, end)  shared_ring_notifier_close(&n)
     shared_ring_notifier_open_named(&n, name)  shared_ring_notifier_unlink(name)
   Options (shared_ring_options; every zero field is its default, so {0}, NULL and
   SHARED_RING_OPTIONS_INIT attach alike; SHARED_RING_OFF is a numeric option's own zero):
     spin_ns 50 us, spin_max_ns 400 us, resume_percent 50, cork_limit 64 KiB, recheck_ns 250 ms,
     trail_ns 2 us, wait/wake/hook_user NULL (OS waits), region_fd 0 (none),
     flags 0 (SHARED_RING_TAKE_BACK, SHARED_RING_POLL_ONLY, SHARED_RING_REALTIME)
   Compile-time options: section 6.

   ============================================================================
   CONTENTS
   ============================================================================
     1. The API on one screen (above)
     2. Quick start (two threads, two processes)
     3. The shared region, byte by byte
     4. The protocol: publishing, waiting, hysteresis
     5. Safety contract (who may call what, crashed and hostile peers)
     6. Options
     7. Limits
     8. Revision history

   ============================================================================
   2. QUICK START
   ============================================================================
   Set up (once, by whoever creates the memory):
       size_t size = shared_ring_region_size(1 << 20, 0);  // 1 MiB data area
       void *mem = aligned_alloc(128, size);  // MSVC: _aligned_malloc(size, 128)
       shared_ring_format(mem, size, 1 << 20, 0);          // 0: default max message

   Producer (one thread or process):
       shared_ring_producer p;
       shared_ring_attach_producer(&p, mem, size, NULL);
       shared_ring_write_bytes(&p, "hello", 5, SHARED_RING_FOREVER);
       shared_ring_write_str(&p, "world", SHARED_RING_FOREVER);
       shared_ring_close(&p);                           // end of stream

   Consumer (another thread or process):
       static int on_message(void *user, const void *data, size_t len) {
           fwrite(data, 1, len, stdout);
           return 0;                                    // 0: keep going
       }
       shared_ring_consumer c;
       shared_ring_attach_consumer(&c, mem, size, NULL);
       while (shared_ring_read(&c, on_message, NULL, SHARED_RING_FOREVER) >= 0) {}

   Between processes (define SHARED_RING_SHM for the helpers), both programs make the same three
   calls, so either may start first:
       shared_ring_shm shm;
       shared_ring_options o = SHARED_RING_OPTIONS_INIT;
       shared_ring_shm_open(&shm, "/my_ring", size, timeout_ns);
       shared_ring_prepare(shm.region, shm.size, 0, max_message, shm.fd);
       o.region_fd = shm.fd;     // the kernel then tells each side of a death
       shared_ring_attach_consumer_wait(&c, shm.region, shm.size, &o,
                                        timeout_ns);  // or _producer_wait
   prepare formats the region unless a live process uses it; attach says NOT_FORMATTED until then
   (the _wait forms wait). The last user unlinks the name (docs/processes.md: the whole protocol).

   ============================================================================
   3. THE SHARED REGION, BYTE BY BYTE
   ============================================================================
   All fields are fixed-width, native byte order, at fixed offsets from the start of the region, so
   32-bit and 64-bit processes agree on them. The region must be at least 8-byte aligned (128
   recommended: then every block below sits on its own pair of 64-byte cache lines). Each 128-byte
   block has one writer, and what one side writes per message or per batch never shares a block
   with what the other side reads per message.

     offset size  owner     field
     ------ ----  --------  ---------------------------------------------------
          0    4  format    magic       0x53524E47 ("GNRS" in memory on LE)
          4    4  format    version     layout version, 4
          8    8  format    capacity    data area bytes, a power of two >= 64
         16    4  format    max_message largest payload in bytes
         20    4  format    data_offset where the data area starts: 1024
         24    8  format    ring_id     random, new at every format
         32    8  both      attaches    attaches since the format; each takes the next as its id
         40   88  -         reserved, zero
        128    8  producer  write_pos   bytes published (monotonic; may lag the last record
                                        by one record or corked batch: see section 4)
        136  120  -         reserved, zero
        256    8  consumer  read_pos    bytes ever released (monotonic)
        264    4  consumer  corrupt     1 once the consumer found bad data
        268    4  consumer  close_seen  1 once a consumer read the close (prepare may then format)
        272  112  -         reserved, zero
        384    4  consumer  consumer_sleeping   futex word: 1 = asleep on data
                                        (2: just attached, look at me)
        388    4  -         reserved, zero
        392    4  consumer  consumer_wait_mode  held or not, how it sleeps and wakes (below)
        396    4  consumer  consumer_bell  0, or the number of a doorbell in the consumer's
                                        process that its wait_any sleeps on (section 4)
        400    8  -         reserved, zero
        408    8  consumer  consumer_fenceless_for  attach id of the producer it releases
                                        to without a fence, or 0: it fences (section 4)
        416   96  -         reserved, zero
        512    4  producer  producer_sleeping   futex word: 1 = asleep on space
                                        (2: just attached, look at me)
        516    4  -         reserved, zero
        520    4  producer  producer_wait_mode  held or not, how it sleeps and wakes (below)
        524    4  producer  closed      1 once the producer closed the stream
        528    8  producer  producer_wake_pos   wake the producer once read_pos is at or past this
        536    8  producer  producer_fenceless_for  attach id of the consumer it publishes
                                        to without a fence, or 0
        544    8  producer  producer_bells  which doorbell table its wake-ups ring (0: none): a
                                        number only compared, never followed (section 4)
        552   88  -         reserved, zero
        640    8  producer  producer owner  0 FREE, or pid (bits 0-28), LOCKED (bit 29: holds its
                                        lock on byte 640 of the region's file), a state (bits
                                        30-31: 0 ATTACHED, 1 CLAIMING, 2 FORMATTING) and a number
                                        telling its process from others of that pid (high 32); its
                                        transitions: docs/protocol.md, "The lifecycle"
        648    8  producer  producer attach id  its number in `attaches` (bit 63: an attach claims
                                        the side, over the id it replaces)
        656   16  producer  identity slot  who (the owner word without its state) and its
                                        pid namespace (Linux; 1 elsewhere; 0: cannot
                                        tell); written by the word's holder after its move
        672   96  -         reserved, zero
        768   32  consumer  consumer owner, attach id, identity slot: as the producer's (its
                                        lock: byte 768)
        800  224  -         reserved, zero
       1024  cap  both      data area: records

   A record is an 8-byte header word followed by the payload, padded to 8 bytes. The header is one
   64-bit word, stored and loaded in one piece:
       low 32 bits   payload length; or 0xFFFFFFFF for a padding record; or 0xFFFFFFF0 | n
                     (n 1 to 7) for a filler of n * 8 bytes (header included) that puts the
                     next record's payload at an aligned claim's alignment
       high 32 bits  tag: the low 32 bits of the record's position, | 1
   A record never wraps: when the next one does not fit before the end of the data area, the
   producer writes a padding record that covers the rest and starts again at offset 0. The offset
   of position `pos` is pos & (cap - 1). The 8 bytes after the last record are always zero (the
   "end mark"), so the ring holds at most capacity - 8 bytes of records.

   A wait_mode word says whether a handle holds its side, how it sleeps and how it wakes the other:
       0             NONE: no handle holds the side (formatted so; a detach leaves it so)
       low 8 bits    0 never sleeps unbounded (spins or naps), 1 futex,
                     2 ulock, 3 WaitOnAddress, 4 its own wait hook
       bit 8 + k     it makes the wake-up call that reaches a sleeper of kind k
       bit 15        HELD: a handle holds the side (a dead holder's stays until a successor's)
       high 16 bits  the holder's attach id, low 16 bits

   ============================================================================
   4. THE PROTOCOL
   ============================================================================
   Publishing. Each record says itself that it is there. The producer writes the payload, zeroes
   the 8 bytes after the record (the end mark: where the consumer looks next), then stores the
   header word with release order. The consumer loads the header at its position with acquire
   order: a tag equal to that position's means "published". The end mark keeps stale bytes of an
   earlier lap from reading as a header, and zeroed memory is never a message (a tag is never 0),
   so in steady flow the consumer touches only the record lines. The producer also stores write_pos
   after each publish, in a block of its own: the consumer reads it only when it waits and finds no
   record ("empty" or "corrupt"?) and while it trails; a restarted producer walks the records from
   it to the real end. The consumer stores read_pos once per batch; the producer re-reads it only
   when its cached free space runs out.

   Batching. read_some() hands every available message to the callback and stores read_pos once at
   the end. cork()/uncork() lets the producer write many messages and publish them at once: the
   header of the first one is held back and stored last. A corked batch is published anyway once it
   holds cork_limit bytes (default 64 KiB: beyond that, holding back only idles the consumer), and
   a corked producer that must wait for space, or returns FULL, publishes first, so it can never
   deadlock against a consumer that waits for data, nor spin forever retrying a write with timeout
   0.

   Trailing. A consumer right behind a fast producer reads each cache line while the producer still
   writes it, and lines cross between the cores again and again. So when 16 waits in a row each
   ended within trail_ns (default 2 us: a dense stream), shared_ring_read lets the producer run
   ahead: it holds off up to trail_ns, or until 64 KiB more are published, then reads the batch. A
   hold-off that ends short of 64 KiB, with fewer than 16 messages read and under 1 KiB published
   meanwhile, ends it, and so do two that find the producer publishing at the rate it had while we
   read right behind it (within 4/5..5/4): a paced stream gains nothing. The next trial then takes
   twice as many quick waits (up to 4096), so a request/reply pair or a paced stream almost never
   pays it. The price, where it pays: a message may wait up to trail_ns longer. trail_ns = 0 turns
   it off; read_some, peek and wait never hold off; stats.trails counts the trials.

   Waiting. A side that must wait spins for spin_ns nanoseconds (default 50 us; time, not a count,
   because a pause instruction costs 10x more on some CPUs than on others; the clock is read every
   32 pause rounds), looking only at words the peer rarely writes (the record header and `closed`;
   write_pos every 32 rounds). Then it announces itself in its *_sleeping word and sleeps on it
   (Linux futex, shared across processes; WaitOnAddress on Windows; ulock on macOS; short sleeps
   elsewhere). After publishing, the other side reads that word: only when it is 1 does it make a
   wake-up system call. Steady flow makes no system calls.

   The spin adapts. When a sleep ends with data within twice the spin, the next wait spins twice as
   long, up to spin_max_ns (default 400 us); any other sleep halves it, down to spin_ns. So steady
   flow with rare pauses stops sleeping, while an idle side still sleeps after spin_ns; a stream
   whose gaps wander near the spin may keep a CPU spinning up to spin_max_ns per wait.
   stats.spin_now_ns shows it; wait_any adapts its first ring's.

   Doorbells. shared_ring_wait_any sleeps on every ring's consumer_sleeping word at once with
   futex_waitv (at most 128 words, Linux 5.16). For more rings, or where futex_waitv (or the
   kernel clock call its deadline needs) is refused, when every attached producer runs in the
   consumer's process, the set sleeps on one of this copy's 64 doorbells, named in each ring's
   consumer_bell; a producer that wakes the consumer also rings it (a wrong number is a spurious
   wake-up, never a store elsewhere). A producer of another process rings none: the set looks again
   every 50 ms. SHARED_RING_STATIC has no doorbells (each file would have its own table).
   Otherwise the set sleeps in 1 ms slices.

   Mixed builds. The sides may be built differently (OS waits, wait hooks, SHARED_RING_NO_OS_WAIT).
   Each records in its wait_mode word how it sleeps and which wake-up calls it makes; a sleeper
   whose peer makes no call that reaches it sleeps in 1 ms slices (tests/mixed_builds.c). While no
   handle holds the peer's side, it sleeps at most 50 ms at a time: the next peer's attach wakes it
   if its calls reach it, and if not it finds that peer so (a detach takes its word back to NONE).
   Not covered: a peer that replaces a live handle (SHARED_RING_TAKE_BACK) or a dead one whose death
   the sleeper cannot judge, built so that its calls do not reach the sleep: that sleeper looks
   again only at recheck_ns (keep it on when builds mix).

   A safety net. No wake-up is expected to be lost, but one sleep lasts at most recheck_ns (default
   250 ms) before the waiter looks again: should a wake-up ever fail to come, the wait goes on late
   instead of never (counted in stats.late_wakes; the tests expect 0).

   When the OS says no. A refused wait naps 1 ms (stats.wait_failures) instead of retrying in a
   busy loop. Timeouts are clamped to what the OS's field holds, never turned into "forever"; a
   clock that fails, runs backwards or stands still makes timeouts inexact, never endless. Windows
   sleeps in timer ticks (15.6 ms unless timeBeginPeriod): a wait may overrun by up to a tick.

   Asymmetric barriers. "Store my position, then load the peer's sleeping word" needs a full fence,
   or both sides can miss each other; on x86 it halved throughput at 64 B (0.92-1.00x in a slow
   host state since it prefetches ahead, srng_prefetch_ahead; still ~0.5x in a fast one). Between
   two threads of one Linux process the fence moves to the cold side: a side publishes without one
   to a peer the kernel places in its own process (same pid, same pid namespace) and writes that
   peer's attach id in its fenceless_for word; the peer, about to sleep, calls
   membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) before its last look. To a peer in another process,
   or one it cannot place, it fences (no membarrier reaches another process for certain:
   docs/protocol.md, "Who fences"); to a peer that never sleeps on a wake-up
   (SHARED_RING_POLL_ONLY) and from a real-time side (SHARED_RING_REALTIME, which wakes nobody) it
   needs none. Each side chooses again when a new peer attaches (the attach leaves 2 in its
   sleeping word) and before each sleep; until then the new peer sleeps in 1 ms slices. Attach
   registers the process for PRIVATE_EXPEDITED (the first registration in a process that already
   runs threads waits 10-25 ms for an RCU grace period). SHARED_RING_NO_MEMBARRIER makes every
   publish fence.

   Hysteresis. When the producer finds the ring full it does not resume as soon as one record's
   worth is free (that falls into lockstep with the consumer: every record then costs a cache-line
   round trip each way). It waits until `resume_percent` of the capacity is free (default 50%), and
   the consumer only wakes a sleeping producer once that much is free. A write with timeout 0
   likewise: once it returned FULL, it keeps returning FULL until the threshold is free.

   ============================================================================
   5. SAFETY CONTRACT
   ============================================================================
   - Exactly one producer handle and one consumer handle per ring at a time. A handle is used by
     one thread at a time; handles are plain structs the caller owns. Functions taking a producer
     (consumer) handle are for the producer (consumer); the rest for either.
   - Callbacks (fill, read, wait and wake hooks) may not call back into their own handle: every
     such call returns SHARED_RING_ERR_STATE and changes nothing. Calls on other handles are fine.
   - Ordering and integrity: the consumer sees every published message exactly once, in order,
     whole. (A restarted consumer starts at read_pos: it gets again what its predecessor peeked or
     read but did not release.)
   - The consumer trusts nothing in the region. Capacity and max message size are read once at
     attach and validated; every header word is loaded once and checked (tag, length against
     max_message, the end of the data area, and one capacity past read_pos) before use, and
     write_pos, when read, is checked against what the records show. Anything inconsistent gives
     SHARED_RING_ERR_CORRUPT, from then on for every call on that handle, and nothing outside the
     region is ever read or written. The producer likewise validates read_pos. The consumer's
     finding is flagged in the region and wakes a sleeping producer; the producer returns
     ERR_CORRUPT from its next wait or full ring, at the latest one capacity of writes later (it
     does not read the consumer's line per message), and at once from flush and close.
   - Payload bytes are not checksummed: a hostile producer can change a message while you read it.
     Copy it first if the peer is not trusted.
   - One handle per side. A second attach of an attached side gets ERR_BUSY, from this process too
     (SHARED_RING_TAKE_BACK takes back a side whose handle the program lost); a dead process's side
     is taken over. A death is judged only when the kernel says so: give each side the region's
     file descriptor (options.region_fd, and prepare's region_fd; Linux) and it holds a lock on one
     byte of that file, which the kernel drops when its process dies, whatever namespace or
     container it runs in. Besides, a holder whose pid is in the judge's own pid namespace
     (Windows: any) is gone once the kernel says that pid ended (pidfd; a handle). Anything else
     counts alive: a holder in another pid namespace without a lock, or any holder on macOS, stays
     attached for good (its side taken until the region is formatted, its peer's waits run to their
     timeout) rather than be judged on a guess (docs/processes.md). Do not close descriptors you
     did not open (closefrom) while attached: the lock lives in one.
   - A peer that leaves tells the other: a detach wakes the peer, whose waits (between threads too)
     return what was published, then PEER_GONE (also after a peer that came and went between two
     looks, and one built without identities). A crash, told by the kernel: the consumer gets
     every message published before it, then CLOSED if the producer had closed, else PEER_GONE from
     its waits within 50 ms (also FOREVER waits: such a sleep is cut into 50 ms slices, and the
     lock tested between them; never per message); a producer's write that waits returns PEER_GONE,
     one with timeout 0 FULL once the ring is full. PEER_GONE is said once at once; later waits
     wait for a new peer up to their timeout.

   ============================================================================
   6. OPTIONS (define before including)
   ============================================================================
   SHARED_RING_IMPLEMENTATION  implementation file only: emit the code.
   SHARED_RING_STATIC          global: every function is static (and can be inlined); define it
                               with SHARED_RING_IMPLEMENTATION in each file that uses the ring.
   SHARED_RING_API             global: linkage/attributes for every public function, e.g.
                               __declspec(dllexport). Default: extern (static with
                               SHARED_RING_STATIC).
   SHARED_RING_ASSERT(x)       implementation file only: internal invariant checks. Default:
                               assert(x) from <assert.h>.
   SHARED_RING_NO_OS_WAIT      implementation file only: no OS wait or wake calls (freestanding,
                               consoles). Waits spin, unless run-time wait hooks are given.
   SHARED_RING_SHM             global: the shared memory helpers (shared_ring_shm_open and
                               friends). POSIX builds need _GNU_SOURCE or _POSIX_C_SOURCE
                               200809L defined before the first include.
   SHARED_RING_NOTIFIER        global: the event-loop notifier (shared_ring_notifier_open and
                               friends).
   SHARED_RING_NOTIFIER_PIPES  implementation file only: notifier ends are pipes, not eventfds,
                               on Linux too.
   SHARED_RING_NO_INLINE       any file: no inline fast path for write_bytes, claim, commit,
                               read_some and read (every call is a call).
   SHARED_RING_NO_MEMBARRIER   implementation file only: never publish without a fence (no
                               membarrier registration on Linux).
   SHARED_RING_SHM_MODE        implementation file only: the mode of objects shared_ring_shm_open
                               creates, and the widest it accepts from another creator (0600).
   SHARED_RING_NOW_NS()        implementation file only: a monotonic clock in nanoseconds
                               (uint64_t) for timeouts. Default: clock_gettime /
                               QueryPerformanceCounter / timespec_get.
   SHARED_RING_DEFAULT_SPIN_NS global (it sets SHARED_RING_OPTIONS_INIT): nanoseconds to spin
                               before sleeping (50000).
   SHARED_RING_DEFAULT_CORK_LIMIT  global: bytes after which a corked batch is published
                               anyway (65536; 0: never).
   SHARED_RING_DEFAULT_RECHECK_NS  global: the longest one sleep lasts before the waiter looks
                               again, woken or not (250000000; 0: until woken or timed out).
   SHARED_RING_DEFAULT_SPIN_MAX_NS global: the longest the spin grows to (400000).
   SHARED_RING_DEFAULT_TRAIL_NS    global: how far shared_ring_read lets the producer run ahead
                               in a dense stream, in ns (2000; 0: never).
   SHARED_RING_DEFAULT_RESUME_PERCENT global: free % at which a producer resumes after FULL (50).

   Warnings. The whole header builds clean as C11 and C++11..20 with -Wall -Wextra -Wpedantic
   -Wconversion -Wshadow (and more: make test lists them), and with clang -Weverything but
   -Wno-padded and the C++98 compatibility warnings (C++11 is required: <atomic>).

   ============================================================================
   7. LIMITS
   ============================================================================
   capacity: a power of two from 64 bytes to 2^62 (others are rounded up); the ring holds at most
   capacity - 8 bytes of records (the end mark). max_message: at most capacity/2 - 8 (any message
   fits in an empty ring, whatever the wrap point) and 2^31 - 8. Tags repeat every 4 GiB; the end
   mark, not the tag, keeps stale bytes out. Positions are 64-bit. Needs lock-free 32- and 64-bit
   atomics (the build fails otherwise); both processes need one byte order (a mismatch reads as a
   bad magic).

   ============================================================================
   8. REVISION HISTORY
   ============================================================================
   0.2.0  layout version 4: see CHANGELOG.md.
   0.1.0  first release: layout version 1.
*/

#ifndef SHARED_RING_H
#define SHARED_RING_H
/* clang -Weverything in C: the header reads the region's words through
   pointers cast from its bytes; every such address is 8-aligned (attach
   checks the region) or aligned for its word (the layout), which
   -Wcast-align cannot know. (C++'s reinterpret_cast is not flagged.) */
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wcast-align"
#endif

#define SHARED_RING_VERSION_MAJOR 0
#define SHARED_RING_VERSION_MINOR 2
#define SHARED_RING_VERSION_PATCH 0
#define SHARED_RING_VERSION "0.2.0"
#define SHARED_RING_LAYOUT_VERSION 4u
#define SHARED_RING_MAGIC 0x53524E47u

#include <stddef.h>
#include <stdint.h>

#ifndef SHARED_RING_API
#ifdef SHARED_RING_STATIC
#if defined(__GNUC__) || defined(__clang__)
#define SHARED_RING_API static __attribute__((unused))
#else
#define SHARED_RING_API static
#endif
#else
#define SHARED_RING_API extern
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes before the data area in every region. */
#define SHARED_RING_HEADER_SIZE 1024u
/* Pass as a timeout to wait as long as it takes. 0 means "do not wait". */
#define SHARED_RING_FOREVER UINT64_MAX

/* Results: 0 is success, negative values say why not. FULL, EMPTY,
   TIMEOUT, CLOSED, NOT_FORMATTED and PEER_GONE are ordinary outcomes; the
   ERR_ ones are errors. */
typedef enum shared_ring_result {
    SHARED_RING_OK = 0,
    SHARED_RING_FULL = -1,           /* no room now (non-blocking producer) */
    SHARED_RING_EMPTY = -2,          /* no message now (non-blocking consumer) */
    SHARED_RING_TIMEOUT = -3,        /* the timeout passed first */
    SHARED_RING_CLOSED = -4,         /* producer closed and all was read */
    SHARED_RING_ERR_ARG = -5,        /* NULL pointer or argument out of range */
    SHARED_RING_ERR_TOO_BIG = -6,    /* message longer than max_message/claim */
    SHARED_RING_ERR_SIZE = -7,       /* region too small or bad capacity */
    SHARED_RING_ERR_ALIGN = -8,      /* region not 8-byte aligned */
    SHARED_RING_ERR_MAGIC = -9,      /* region not formatted (bad magic) */
    SHARED_RING_ERR_VERSION = -10,   /* formatted by another layout version */
    SHARED_RING_ERR_CORRUPT = -11,   /* region content is inconsistent */
    SHARED_RING_ERR_STATE = -12,     /* call not valid now (e.g. no claim) */
    SHARED_RING_ERR_HANDLE = -13,    /* handle not attached, or wrong side */
    SHARED_RING_NOT_FORMATTED = -14, /* region not formatted yet (zero magic,
                                        or being formatted): wait and retry */
    SHARED_RING_ERR_BUSY = -15,      /* this side is attached (a live process,
                                        or another handle of this one) */
    SHARED_RING_PEER_GONE = -16,     /* the peer detached or its process died
                                        (nothing left to read) */
    SHARED_RING_ERR_SYSTEM = -17,    /* the OS refused (shared memory helpers:
                                      errno / GetLastError says why) */
    SHARED_RING_ERR_ACCESS = -18     /* a shared memory object of another user,
                                        or open wider than SHARED_RING_SHM_MODE */
} shared_ring_result;

/* Run-time wait hooks (optional). wait: sleep while the 32-bit word at
   `addr` equals `expected`, at most timeout_ns (SHARED_RING_FOREVER: no
   limit); spurious returns are fine. wake: wake every sleeper on `addr`. */
typedef void (*shared_ring_wait_fn)(void *user, void *addr, uint32_t expected, uint64_t timeout_ns);
typedef void (*shared_ring_wake_fn)(void *user, void *addr);

/* Attach-time tuning. Every field's zero means its default, so `{0}`, a
   memset, SHARED_RING_OPTIONS_INIT and NULL all behave alike. Where zero
   is a setting of its own (no spin, no hysteresis, no safety net), spell
   it SHARED_RING_OFF. */
typedef struct shared_ring_options {
    uint32_t spin_ns;         /* spin this long (ns) before sleeping
                                 (default 50 us; OFF: sleep at once) */
    uint32_t resume_percent;  /* producer: after FULL, resume when this % of
                                 the capacity is free (1..100, default 50;
                                 OFF: as soon as the message fits). Writes
                                 with timeout 0 too: after one FULL they
                                 stay FULL until then, so an overflow drops
                                 a burst; OFF drops only what does not fit */
    uint32_t cork_limit;      /* producer: a corked batch is published once
                                 it holds this many bytes (default 64 KiB;
                                 OFF: only at uncork, flush, close or a wait) */
    uint32_t recheck_ns;      /* a sleep lasts at most this long (ns) before
                                 the waiter looks again, woken or not; a
                                 safety net (default 250 ms; OFF: until
                                 woken or timed out) */
    uint32_t trail_ns;        /* consumer: in a dense stream, shared_ring_read
                                 lets the producer get this far ahead (ns)
                                 before reading (default 2 us; OFF: never;
                                 see "Trailing") */
    uint32_t spin_max_ns;     /* the spin may grow up to this long (ns) while
                                 sleeps keep ending soon (default 400 us; at
                                 most spin_ns, or OFF: it never grows; see
                                 "Waiting") */
    shared_ring_wait_fn wait; /* both NULL: built-in OS waits */
    shared_ring_wake_fn wake;
    void *hook_user; /* passed to wait and wake */
    uint32_t flags;  /* SHARED_RING_TAKE_BACK, SHARED_RING_POLL_ONLY,
                        SHARED_RING_REALTIME, or 0 */
    int region_fd;   /* the descriptor of the file the region maps from
                        its offset 0 (shm.fd), or 0: none. Linux: the
                        side then holds a lock the kernel drops when its
                        process dies, which tells its death to a peer in
                        any pid namespace (without it, only a peer in
                        the same one hears, by the pid). The handle keeps
                        a descriptor of its own until detach (other
                        systems: not used) */
} shared_ring_options;

/* flags: attach even though a handle of this process holds the side (one
   the program lost without detaching). Never takes a side from another
   live process. The lost handle keeps its lock: this one holds none, and
   once it detaches, other processes' attaches wait (NOT_FORMATTED) until
   this process exits. Stop using the lost handle: its close and sleeping
   waits then say ERR_HANDLE and its detach gives nothing back, but its
   writes are not checked (the hot path), and a detach made *while* this
   attach runs may still free the side (without region_fd both hold one
   owner word). */
#define SHARED_RING_TAKE_BACK 1u
/* flags: this side polls and is never woken: after its spin, a wait naps
   in slices of 1 ms and looks again. In return the peer publishes (or
   releases) to it without a fence, even from another process: what a
   consumer that polls, as Aeron's does, saves its producer per message.
   Not with wait/wake hooks (so no arm). */
#define SHARED_RING_POLL_ONLY 2u
/* flags: a real-time side (an audio callback, a game's frame): it promises
   never to wait, and none of its calls makes a system call, takes a lock
   or reads the clock: write_bytes / write_str / write / claim with timeout
   0, commit, abort, cork, uncork, flush, read_some, peek, release, the
   stats and usage calls. It wakes nobody: its peer, whatever its options,
   sleeps in 1 ms slices when it waits for this side (a consumer sees a
   message up to ~1 ms late after its spin; a producer on a full ring,
   space as late). Its calls learn of the peer from its owner word alone:
   a detach gives PEER_GONE (read_some, peek; a write finding the ring
   full), a process's death is not judged (a replacement's messages just
   follow); to hear of a death, watch shared_ring_*_peer_fd (asked for
   outside the real-time calls: it watches the process that held the side
   then) or wait on the handle. Set it on the real-time side; the other
   side needs nothing. A wait on this side may make system calls, and
   naps as with POLL_ONLY. Not with wait/wake hooks. */
#define SHARED_RING_REALTIME 4u

/* A numeric option's zero setting (its field's 0 means the default). */
#define SHARED_RING_OFF 0xFFFFFFFFu

#ifndef SHARED_RING_DEFAULT_SPIN_NS
#define SHARED_RING_DEFAULT_SPIN_NS 50000u
#endif
#ifndef SHARED_RING_DEFAULT_RESUME_PERCENT
#define SHARED_RING_DEFAULT_RESUME_PERCENT 50u
#endif
#ifndef SHARED_RING_DEFAULT_CORK_LIMIT
#define SHARED_RING_DEFAULT_CORK_LIMIT 65536u
#endif
#ifndef SHARED_RING_DEFAULT_RECHECK_NS
#define SHARED_RING_DEFAULT_RECHECK_NS 250000000u
#endif
#ifndef SHARED_RING_DEFAULT_TRAIL_NS
#define SHARED_RING_DEFAULT_TRAIL_NS 2000u
#endif
#ifndef SHARED_RING_DEFAULT_SPIN_MAX_NS
#define SHARED_RING_DEFAULT_SPIN_MAX_NS 400000u
#endif
/* NULL in C, nullptr in C++ (where clang's -Wzero-as-null-pointer-constant
   flags NULL); used by SHARED_RING_OPTIONS_INIT. */
#ifdef __cplusplus
#define SHARED_RING_NULLPTR nullptr
#else
#define SHARED_RING_NULLPTR NULL
#endif
/* clang-format off */
#define SHARED_RING_OPTIONS_INIT                                                               \
    { SHARED_RING_DEFAULT_SPIN_NS, SHARED_RING_DEFAULT_RESUME_PERCENT, SHARED_RING_DEFAULT_CORK_LIMIT,                        \
      SHARED_RING_DEFAULT_RECHECK_NS, SHARED_RING_DEFAULT_TRAIL_NS,                            \
      SHARED_RING_DEFAULT_SPIN_MAX_NS, SHARED_RING_NULLPTR, SHARED_RING_NULLPTR,               \
      SHARED_RING_NULLPTR, 0u, 0 }
/* clang-format on */

/* Per-side counters, kept in the handle (no shared writes). */
typedef struct shared_ring_stats {
    uint64_t messages;      /* messages written / delivered */
    uint64_t bytes;         /* payload bytes written / delivered */
    uint64_t waits;         /* calls that found no room / no data and waited */
    uint64_t sleeps;        /* times the side slept in the OS (or wait hook) */
    uint64_t wakes;         /* wake-up calls made for the other side (a
                               system call, or a call of the wake hook);
                               on a real-time side, only by its attach,
                               adopt or detach */
    uint64_t wait_ns;       /* total time spent waiting */
    uint64_t largest;       /* largest payload seen, bytes */
    uint64_t wait_failures; /* OS waits that failed, replaced by 1 ms naps */
    uint64_t late_wakes;    /* sleeps that lasted recheck_ns and then found
                               what they waited for: a wake-up that did not
                               come (expected 0) */
    uint64_t trails;        /* consumer: times it began trailing a dense
                               stream (see "Trailing") */
    uint64_t spin_now_ns;   /* how long the next wait spins before it
                               sleeps (between spin_ns and spin_max_ns) */
} shared_ring_stats;

/* What both handles have in common. Fields are private: read them through
   the functions below. */
typedef struct shared_ring_side {
    unsigned char *region;
    unsigned char *data;
    uint64_t capacity;
    uint64_t mask;
    uint32_t max_message;
    uint32_t magic; /* which side this handle is, once attached */
    uint32_t spin_ns;
    uint32_t recheck_ns;
    uint32_t round_ns; /* what a spin round costs, as last measured */
    uint32_t spin_now; /* the spin budget now: spin_ns..spin_max (ns) */
    uint32_t spin_max;
    uint32_t broken;    /* 1 once corruption was seen: sticky */
    uint32_t fenceless; /* 1: we publish without a fence (barrier_peer is
                           in this process and sleeps behind membarrier) */
    uint32_t process_barrier; /* 1: this process may use membarrier */
    uint32_t open;      /* the side's magic while calls may go ahead (attached,
                           not broken, not in a callback; producer: no claim
                           open, not closed), so hot paths test one word;
                           producer: SRNG_CLAIM_OPEN instead while a plain
                           claim is open (and the rest holds) */
    uint32_t busy;      /* 1 while a callback of this handle runs */
    uint32_t peer_gone; /* 1: the peer died or detached (the last check) */
    uint32_t gone_told; /* 1: a call has returned PEER_GONE for that */
    uint32_t poll_only; /* 1: attached with SHARED_RING_POLL_ONLY or
                           SHARED_RING_REALTIME: its waits nap */
    uint32_t realtime;  /* 1: attached with SHARED_RING_REALTIME: no call
                           makes a system call or wakes the peer */
    uint64_t ring_id;   /* the region's ring id, as read at attach */
    uint64_t owner;     /* our identity word in the region (0: none) */
    uint64_t attach_id; /* ours, from the region's attach count */
    uint64_t barrier_peer; /* the peer attach id `fenceless` was chosen for */
    uint64_t check_at;  /* clock time of the next peer liveness check */
    uint64_t peer_owner; /* the peer's owner word at that check */
    uint64_t peer_attach; /* the peer's attach id as last taken in ... */
    uint32_t peer_held;   /* ... and whether its side was held then */
    uint32_t srng_pad;    /* (one size on every ABI) */
    int lock_fd;         /* our description of the region's file, holding
                            our side's lock (-1: none) */
    int peer_fd;         /* a pidfd of the peer's process, for event loops
                            (shared_ring_*_peer_fd; -1: none) */
    uint64_t peer_fd_owner; /* the peer's owner word peer_fd was opened for */
    shared_ring_wait_fn wait;
    shared_ring_wake_fn wake;
    void *hook_user;
    shared_ring_stats stats;
} shared_ring_side;

/* Producer handle: a plain struct you own. Private fields. */
typedef struct shared_ring_producer {
    shared_ring_side s;
    uint64_t write_pos;   /* local end of written records */
    uint64_t published;   /* end of what the consumer may see (while
                             `direct` is 1: write_pos, not kept here) */
    uint64_t pending;     /* header word held back for the record at
                             `published` while write_pos is beyond it */
    uint64_t read_cache;  /* last read_pos seen */
    uint64_t resume_free; /* hysteresis threshold in bytes */
    uint64_t claim_len;   /* bytes of the open claim; SRNG_NO_CLAIM: none */
    uint64_t cork_limit;  /* publish a corked batch at this many bytes */
    uint64_t fast_left;   /* a record this long or shorter may be written
                             at write_pos without any other check: room to
                             the end of the lap and of the known free space
                             (less the end mark), or 0 while FULL is
                             latched */
    uint32_t claim_skip;   /* bytes of filler before the open aligned claim's
                              record, written at commit (else 0) */
    uint32_t cork_depth;
    uint32_t direct;       /* 1: a finished record goes out at once, with
                              no fence: fenceless, uncorked, nothing held back */
    uint32_t full_latched; /* FULL was reported; wait for resume_free */
    uint32_t closed;
    uint32_t prefetch_w;   /* 1: the CPU has PREFETCHW (the consumer's u32s are as
                              many: the handles have one size on every ABI) */
} shared_ring_producer;

/* Consumer handle: a plain struct you own. Private fields. */
typedef struct shared_ring_consumer {
    shared_ring_side s;
    uint64_t read_pos;     /* last read_pos stored to the region */
    uint64_t peek_pos;     /* next record to hand out */
    uint64_t write_cache;  /* largest write_pos seen (validated) */
    uint64_t run_ns;       /* clock at the first quick wait of this run */
    uint64_t run_pos;      /* write_pos then */
    uint64_t behind_ns;    /* the last run up to its trial: how long, and */
    uint64_t behind_bytes; /* how far the producer got, read right behind */
    uint32_t peeked;       /* messages handed out by peek, not released */
    uint32_t trail_ns;     /* the option */
    uint32_t trailing;     /* 1 while reads trail a dense stream */
    uint32_t quick_waits;  /* waits in a row that ended within trail_ns */
    uint32_t trial_gap;    /* quick waits that start the next trial */
    uint32_t slow_holds;   /* hold-offs since the last faster one that
                              found the stream paced */
    uint32_t found_large;  /* the last message a look for one found was
                              over 64 bytes: a wait then does not prefetch */
    uint32_t next_ready;   /* wait_any's cursor, kept in the first handle
                              of a set: where its next look starts. (The
                              handles have one size, so a handle of the
                              wrong side is caught by its magic without
                              reading past it.) */
} shared_ring_consumer;

/* A message handed out by shared_ring_peek(). `data` points into the ring,
   8-byte aligned, valid until the message is released. */
typedef struct shared_ring_message {
    const void *data;
    size_t len;
} shared_ring_message;

/* Fill callback for the write family: write at most max_len bytes at dst and
   return how many were written. Returning more than max_len cancels the
   write (SHARED_RING_ERR_TOO_BIG). */
typedef size_t (*shared_ring_fill_fn)(void *user, void *dst, size_t max_len);

/* Read callback: one message (pointer into the ring, valid during the call).
   Return 0 to continue, non-zero to stop after this message. */
typedef int (*shared_ring_read_fn)(void *user, const void *data, size_t len);

/* Nothing now, one rule. Every call that may wait takes timeout_ns last:
   0 = do not wait, SHARED_RING_FOREVER = as long as it takes, else at most
   that many nanoseconds. When there is nothing to do now, the producer
   hears FULL and the consumer EMPTY if the call may not wait, and either
   hears TIMEOUT if it waited and its time ran out:

       call          timeout 0 / never waits    waited, time ran out
       write         FULL                       TIMEOUT
       write_bytes   FULL                       TIMEOUT
       write_str     FULL                       TIMEOUT
       claim         FULL                       TIMEOUT
       read          EMPTY                      TIMEOUT
       wait          EMPTY                      TIMEOUT
       read_some     EMPTY                      (never waits)
       peek          EMPTY                      (never waits)

   Counts are never 0 for "nothing": a read returns how many messages it
   delivered, at least 1.

   How results are documented below: each function's comment ends with
   "Returns:" and every result it can give, each explained once. Rules that
   hold for every call on a handle, and are listed again per function:
   - ERR_HANDLE: the handle is NULL, not attached, or the other side's;
     from close, detach and any wait that would sleep, also a copy of the
     handle in a child forked after attach (the child attaches its own).
   - ERR_STATE: called from inside a callback of the same handle (fill,
     read, wait or wake hook); nothing is changed. Call other handles freely.
   - ERR_CORRUPT: the ring was found corrupt, by this side or (for the
     producer) by the consumer; sticky for the handle. The producer learns
     of the consumer's finding at its next wait or full ring, at the latest
     one capacity of writes later, and at once in flush and close.
   tests/results.c reads these lists from this file and checks every
   function in every state against them. */

/* ---- setup (either side) ----------------------------------------------- */

/* The bytes to allocate for a ring (example: section 2); format and prepare, given the same
   arguments in the same order, then succeed on that many. `capacity`: data area bytes, rounded up
   to a power of two (at least 64); 0: the smallest that takes max_message. `max_message`: the
   largest message (0: the most the capacity allows, capacity/2 - 8). 0 when no supported ring
   fits: max_message above capacity/2 - 8 of the rounded capacity, or larger than any ring, or both
   arguments 0. Either side; never blocks. */
SHARED_RING_API size_t shared_ring_region_size(size_t capacity, size_t max_message);

/* Format `region` as an empty ring, once, before either side attaches, while no one uses it.
   capacity and max_message as for region_size, but capacity 0 means the largest that fits in
   region_size. Either side; never blocks. Returns: OK; ERR_ARG (region NULL, or max_message above
   capacity/2 - 8); ERR_ALIGN (region not 8-byte aligned); ERR_SIZE (capacity larger than any ring,
   or region_size below shared_ring_region_size(capacity, max_message)). */
SHARED_RING_API int shared_ring_format(void *region, size_t region_size, size_t capacity,
                                       size_t max_message);

/* The defaults used when options are NULL. Either side; never blocks, never fails. */
SHARED_RING_API shared_ring_options shared_ring_default_options(void);

/* Attach a producer handle to a formatted region. Producer side; never blocks. A restarted
   producer appends after what was published (on a closed stream its writes say CLOSED). On failure
   the handle is not touched: a new one stays as it was (zero-initialize it, = {0}, to call on it
   after a failed attach), an attached one stays attached and working.
   Returns: OK; NOT_FORMATTED (magic 0: not formatted yet, or a prepare or another attach holds the
   side for a moment, or a forked child keeps the lock of a side its holder detached; retry, or use
   attach_producer_wait); ERR_BUSY (a producer is attached or attaching: a live process, another
   handle of this one, or this very handle; see SHARED_RING_TAKE_BACK); ERR_ARG (NULL handle or
   region, bad options, a region_fd that is not an open regular file holding this ring at offset
   0); ERR_ALIGN; ERR_SIZE (region smaller than its header says); ERR_MAGIC (holds something else);
   ERR_VERSION (another layout version); ERR_CORRUPT (inconsistent header or positions). */
SHARED_RING_API int shared_ring_attach_producer(shared_ring_producer *p, void *region,
                                                size_t region_size, const shared_ring_options *opt);

/* Attach a consumer handle to a formatted region. Consumer side; never blocks. On failure the
   handle is not touched (as attach_producer). Returns: OK; NOT_FORMATTED; ERR_BUSY (a consumer is
   attached: a live process, or another handle of this one); ERR_ARG; ERR_ALIGN; ERR_SIZE;
   ERR_MAGIC; ERR_VERSION; ERR_CORRUPT (all as attach_producer). */
SHARED_RING_API int shared_ring_attach_consumer(shared_ring_consumer *c, void *region,
                                                size_t region_size, const shared_ring_options *opt);

/* Attach, retrying every millisecond up to timeout_ns while the region is not formatted yet
   (another process is still creating or formatting it). Producer / consumer side respectively.
   Returns: OK; NOT_FORMATTED (timeout_ns 0 and not formatted); TIMEOUT (not formatted in time);
   ERR_BUSY; ERR_ARG; ERR_ALIGN; ERR_SIZE; ERR_MAGIC; ERR_VERSION; ERR_CORRUPT (as attach). */
SHARED_RING_API int shared_ring_attach_producer_wait(shared_ring_producer *p, void *region,
                                                     size_t region_size,
                                                     const shared_ring_options *opt,
                                                     uint64_t timeout_ns);
SHARED_RING_API int shared_ring_attach_consumer_wait(shared_ring_consumer *c, void *region,
                                                     size_t region_size,
                                                     const shared_ring_options *opt,
                                                     uint64_t timeout_ns);

/* Format `region` unless it is in use: the set-up step of processes that may start in any order,
   or restart. A ring is left as it is (ring id included) while a live process is attached or
   attaching, and while a consumer has yet to read its stream to the end (a message no consumer
   released, or a close none has read): so prepare never drops a published message (a stream closed
   before its consumer started is delivered, then CLOSED; what a gone pair left unread goes to the
   next consumer). Anything else is formatted: a region holding no ring of this layout, a corrupt
   ring, or one whose sides are gone and whose stream was read to its end or was never closed and
   holds nothing unread. Safe to race with other prepares and attaches (docs/protocol.md, "The
   lifecycle"). region_fd (as options.region_fd; 0: none) makes prepare hold both sides' locks
   while it judges and formats, so a prepare killed midway holds nothing, and it formats under a
   side only on the kernel's word that its process died (section 5). Either side. Blocks only while
   another prepare or an attach holds a side (microseconds; it gives up after a second).
   Returns: OK (formatted now); a count >= 1 (always 1: in use or holding a stream, left as it is);
   ERR_ARG (as format, or region_fd not an open regular file), ERR_ALIGN, ERR_SIZE (as format);
   ERR_BUSY (a side held for a second: a process stopped in the middle, or a side's lock kept by a
   forked child after its holder detached, docs/processes.md). */
SHARED_RING_API int shared_ring_prepare(void *region, size_t region_size, size_t capacity,
                                        size_t max_message, int region_fd);

/* ---- producer ----------------------------------------------------------- */

/* Write one message via a callback: reserve max_len contiguous bytes, call fill(user, dst,
   max_len), publish the length it returns. Producer side; waits for room (see the one rule).
   Returns: OK; FULL; TIMEOUT; PEER_GONE (no room, and the consumer's process died); CLOSED;
   ERR_TOO_BIG (max_len > max_message, or fill returned more than max_len: nothing is written);
   ERR_ARG (fill NULL); ERR_STATE (also: a claim is open); ERR_CORRUPT; ERR_HANDLE. */
SHARED_RING_API int shared_ring_write(shared_ring_producer *p, size_t max_len,
                                      shared_ring_fill_fn fill, void *user, uint64_t timeout_ns);

/* Write a copy of `len` bytes at `data` (data may be NULL when len is 0). Producer side; waits as
   write. Returns: OK; FULL, TIMEOUT, PEER_GONE, CLOSED (as write); ERR_TOO_BIG (len >
   max_message); ERR_ARG (data NULL, len not 0); ERR_STATE (as write); ERR_CORRUPT; ERR_HANDLE. */
SHARED_RING_API int shared_ring_write_bytes(shared_ring_producer *p, const void *data, size_t len,
                                            uint64_t timeout_ns);

/* Write a C string's bytes (not its NUL) straight into the ring. Producer side; waits as write.
   Returns: OK; FULL; TIMEOUT; PEER_GONE; CLOSED; ERR_TOO_BIG (longer than max_message; read no
   further than that); ERR_ARG (str NULL); ERR_STATE; ERR_CORRUPT; ERR_HANDLE (as write_bytes). */
SHARED_RING_API int shared_ring_write_str(shared_ring_producer *p, const char *str,
                                          uint64_t timeout_ns);

/* Zero-copy: reserve `len` contiguous, 8-byte aligned bytes at *out (NULL on failure) for commit()
   to publish (a prefix of) or abort() to drop; one claim at a time. Producer side; waits as write.
   Returns: OK; FULL; TIMEOUT; PEER_GONE; CLOSED; ERR_TOO_BIG (len > max_message); ERR_ARG (out
   NULL); ERR_STATE (also: a claim is already open); ERR_CORRUPT; ERR_HANDLE. */
SHARED_RING_API int shared_ring_claim(shared_ring_producer *p, size_t len, void **out,
                                      uint64_t timeout_ns);

/* As claim, with *out (and the consumer's copy) aligned to `align` bytes (8, 16, 32 or 64): for a
   struct with alignas(16) members (SIMD) built in place. Costs up to align - 8 bytes of ring
   before the record (a filler the consumer steps over): at 64-byte alignment a 64-byte message
   takes 128. The region must be so aligned in every process that maps it (128 serves all; mmap
   gives a page). Producer side; waits as write. Returns: OK; FULL; TIMEOUT; PEER_GONE; CLOSED;
   ERR_TOO_BIG (len > max_message, or len > capacity/2 - align: the record and its largest filler
   must fit in half the ring, as any message does, or some write positions could never take it);
   ERR_ARG (out NULL, or align not 8, 16, 32 or 64); ERR_ALIGN (the data area is not
   `align`-aligned in this process); ERR_STATE; ERR_CORRUPT; ERR_HANDLE (as claim). */
SHARED_RING_API int shared_ring_claim_aligned(shared_ring_producer *p, size_t len, size_t align,
                                              void **out, uint64_t timeout_ns);

/* Finish the open claim as a message of `len` bytes (<= claimed). Producer side; never blocks.
   Returns: OK; ERR_TOO_BIG (len larger than claimed; the claim stays open); ERR_STATE (also: no
   claim open); ERR_CORRUPT (the claim stays open: abort it); ERR_HANDLE. */
SHARED_RING_API int shared_ring_commit(shared_ring_producer *p, size_t len);

/* Drop the open claim unpublished; allowed on a corrupt ring. Producer side; never blocks.
   Returns: OK; ERR_STATE (also: no claim open); ERR_HANDLE. */
SHARED_RING_API int shared_ring_abort(shared_ring_producer *p);

/* Cork (nestable): messages are written but published together only at the outermost uncork, or
   earlier when the batch reaches the cork_limit option, when the producer must wait for space or
   returns FULL, and at flush/close. Producer side; never blocks.
   Returns (cork): OK; ERR_STATE (also: nesting deeper than 2^32-1); ERR_CORRUPT; ERR_HANDLE.
   Returns (uncork): OK; ERR_STATE (also: not corked); ERR_CORRUPT; ERR_HANDLE. */
SHARED_RING_API int shared_ring_cork(shared_ring_producer *p);
SHARED_RING_API int shared_ring_uncork(shared_ring_producer *p);

/* Publish all written so far, corked or not. Producer side; never blocks (may make one wake-up
   system call). Returns: OK; ERR_STATE; ERR_CORRUPT; ERR_HANDLE. */
SHARED_RING_API int shared_ring_flush(shared_ring_producer *p);

/* End the stream: publish everything, mark the ring closed, wake the consumer; later writes return
   CLOSED. Idempotent. Producer side; never blocks.
   Returns: OK (also when already closed); ERR_STATE (also: a claim is open); ERR_CORRUPT (the ring
   is then not marked closed); ERR_HANDLE. */
SHARED_RING_API int shared_ring_close(shared_ring_producer *p);

/* ---- consumer ----------------------------------------------------------- */

/* Batch read: call fn(user, data, len) for each available message in order, until none is left or
   fn returns non-zero, then release them all, and any taken with peek, with one store of read_pos.
   Consumer side; never blocks. Returns: a count >= 1; EMPTY; PEER_GONE (none, and a wait found the
   producer's process dead); CLOSED (none, and the producer closed); ERR_ARG (fn NULL); ERR_STATE;
   ERR_CORRUPT; ERR_HANDLE. */
SHARED_RING_API int shared_ring_read_some(shared_ring_consumer *c, shared_ring_read_fn fn,
                                          void *user);

/* Wait (up to timeout_ns) for a message, then read_some. In a dense stream it first lets the
   producer run ahead for up to the trail_ns option (see "Trailing"; never longer than timeout_ns,
   never with timeout_ns 0). Consumer side; blocks. Returns: a count >= 1; EMPTY; TIMEOUT;
   PEER_GONE (no message, and the producer's process died); CLOSED, ERR_ARG (as read_some);
   ERR_STATE; ERR_CORRUPT (also: its wait found the region formatted anew under the handle, or a
   record the wait saw was gone when read: never EMPTY after a wait that found one); ERR_HANDLE.
   With messages there and not trailing, it costs what read_some does (the inline fast path). */
SHARED_RING_API int shared_ring_read(shared_ring_consumer *c, shared_ring_read_fn fn, void *user,
                                     uint64_t timeout_ns);

/* Wait until a message is available. Consumer side; blocks at most timeout_ns (0: just check).
   Returns: OK (a message is ready); EMPTY; TIMEOUT; PEER_GONE, CLOSED (as read); ERR_STATE;
   ERR_CORRUPT (also at once when the region was formatted anew under the handle); ERR_HANDLE. */
SHARED_RING_API int shared_ring_wait(shared_ring_consumer *c, uint64_t timeout_ns);

/* Pull API: hand out the next message without releasing it; each call moves to the following one,
   and the pointers stay valid until release. Consumer side; never blocks. *msg is zeroed (data
   NULL, len 0) on every result but OK. Returns: OK; EMPTY; PEER_GONE, CLOSED (as read_some);
   ERR_ARG (msg NULL); ERR_STATE; ERR_CORRUPT; ERR_HANDLE. */
SHARED_RING_API int shared_ring_peek(shared_ring_consumer *c, shared_ring_message *msg);

/* Release every message peek handed out so far (one store of read_pos), making room for the
   producer. Allowed on a corrupt ring. Consumer side; never blocks.
   Returns: a count >= 0 (messages released); ERR_STATE; ERR_HANDLE. */
SHARED_RING_API int shared_ring_release(shared_ring_consumer *c);

/* Event loops: the consumer sleeps in your loop (epoll, poll, kqueue, libuv), not in the library;
   both sides attach with wait and wake hooks whose wake signals a descriptor the loop watches (an
   eventfd, a pipe). Arm before every sleep: it announces the consumer as asleep, then looks once
   more; a stale arm costs one spurious wake-up, never a lost one. No wake-up can be promised while
   a producer has still to answer this consumer's attach (it may publish without a fence, as for
   the consumer before) or when membarrier failed: arm then naps 1 ms and says 1, so the loop looks
   again at that pace until the producer's next publish answers. Consumer side; never blocks beyond
   that nap (on Linux it may make one membarrier call).
   Returns: OK (armed: sleep until your descriptor fires; the producer's next publish calls its
   wake hook); a count >= 1 (always 1: a message is ready, or no wake-up promised yet: do not
   sleep, look again); CLOSED (none, and the producer closed); PEER_GONE (the producer detached or
   its process died, so it will never signal; said once, after a look at what it left; to notice a
   death, watch shared_ring_consumer_peer_fd, or sleep with a timeout and re-arm. Then arm arms for
   the next producer, whose attach wakes your loop only if it has wake hooks and is not real-time:
   keep a timeout where one may come); ERR_STATE (also: the handle has no wait hooks; the producer
   attached now has none, so its publishes could not signal the loop); ERR_CORRUPT; ERR_HANDLE. */
SHARED_RING_API int shared_ring_arm(shared_ring_consumer *c);

/* Event loops: a descriptor that becomes readable when the peer's process ends (a Linux pidfd),
   for your loop to watch, so a kill -9 reaches it without a timer: the next call that then finds
   nothing to do (read_some, peek, wait or arm finding no message; a write with timeout 0 finding
   no room) says PEER_GONE, after what the peer published. The handle owns it: do not close it;
   only this call and detach do. Ask for it before each sleep (no system call while the peer is the
   same) and add it to your loop (EEXIST: already there). It stays the same while the process it
   watches holds the peer's side and no call has said PEER_GONE; once it has served (the peer
   detached or died, a new peer attached, a child adopted the side), this call closes it after
   opening the new peer's, so your loop stops watching it (epoll forgets a closed descriptor). A
   peer in this process needs none: its detach wakes your notifier (a thread that exits attached is
   no death: close in a thread-exit destructor). Consumer / producer side respectively; never
   blocks. Returns: a descriptor >= 0; PEER_GONE (the peer's process is gone already); ERR_STATE
   (also: no peer attached, the peer is in this process, the peer's process is in another pid
   namespace or cannot be placed); ERR_SYSTEM (no pidfd: not Linux, Linux before 5.3, or out of
   descriptors: look with a timer instead, arm every recheck_ns or so); ERR_CORRUPT; ERR_HANDLE. */
SHARED_RING_API int shared_ring_consumer_peer_fd(shared_ring_consumer *c);
SHARED_RING_API int shared_ring_producer_peer_fd(shared_ring_producer *p);

/* Wait on many rings at once: return as soon as one has a message or something else to report
   (closed, corrupt, or its producer gone); then its read or read_some says what it has. Ready rings
   are served in turn: each look starts after the ring reported last (the cursor is kept in the
   set's first handle). Sleeps up to timeout_ns, in one system call on Linux (futex_waitv, 5.16+, up
   to 128 rings; for more, or where futex_waitv is refused, a doorbell, when every attached
   producer of the set runs in this process: section 4, "Doorbells"), otherwise in 1 ms slices (a
   timer tick on Windows). A closed or corrupt ring is reported at once every time: take it out of
   the set; one whose producer is gone, until a call on it has said PEER_GONE (then it waits for a
   new producer). NULL entries are skipped. Consumer side, for every handle; a handle must not be
   in two sets waited on at once. Returns: a count >= 0 (the index, below n, of a ring that is
   ready); EMPTY (timeout_ns 0 and nothing ready); TIMEOUT; ERR_ARG (rings NULL, n 0, n > INT_MAX,
   or every entry NULL); ERR_STATE (inside a callback of one of the handles); ERR_HANDLE (an entry
   is not an attached consumer handle). Entries are checked as they are looked at: one past a ready
   ring may go unchecked, but none before the call sleeps. */
SHARED_RING_API int shared_ring_wait_any(shared_ring_consumer *const *rings, size_t n,
                                         uint64_t timeout_ns);

/* ---- either side -------------------------------------------------------- */

/* Stop using the handle, which is unattached afterwards: release this side of the ring, so another
   process can attach as it without ERR_BUSY. A producer first publishes what it wrote (a corked
   batch; an open claim is dropped); it does not close the stream. Producer / consumer side
   respectively, only in the process that attached the handle (a child forked after attach attaches
   its own). Never blocks. Returns: OK (also on a corrupt ring, and for a handle whose side a child
   adopted or another handle took back: it is only dropped); ERR_STATE; ERR_HANDLE. */
SHARED_RING_API int shared_ring_detach_producer(shared_ring_producer *p);
SHARED_RING_API int shared_ring_detach_consumer(shared_ring_consumer *c);

/* In a child forked after attach, take the handle over from the process that attached it
   (daemonising); without it the child's close, detach and sleeping waits get ERR_HANDLE. The side
   is this process's from now on (its owner word names it; the peer judges it, and chooses its
   barrier, by it); the attaching process must not use the handle again (its close and sleeping
   waits then get ERR_HANDLE; its detach only drops the handle). Adopt before the attaching process
   exits (have it wait for the child's word), or the peer may judge the side by the dead process in
   between and say PEER_GONE once. Producer / consumer side respectively; never blocks.
   Returns: OK (also in the attaching process itself: nothing to do); ERR_BUSY (the side is no
   longer the attaching process's: it detached, died and was taken over, or another child adopted
   it); ERR_STATE; ERR_CORRUPT; ERR_HANDLE. */
SHARED_RING_API int shared_ring_adopt_producer(shared_ring_producer *p);
SHARED_RING_API int shared_ring_adopt_consumer(shared_ring_consumer *c);

/* Who is attached to a region, for inspection (tools/shared_ring_stat). Reads the region only (a
   read-only mapping is fine); with region_fd (the file the region maps, or 0: none; Linux) it asks
   the kernel whether each side's holder lives. pid 0: nobody is attached as that side. alive: 1
   alive (its lock is held, or it is the caller's own process), 0 gone (its lock free, or its pid
   ended in the caller's pid namespace) or nobody, -1 cannot tell. */
typedef struct shared_ring_owner {
    uint32_t pid;  /* process id in its pid namespace (0: none), shown from the side's claim
                      on: its attach may not have returned yet */
    int32_t alive; /* 1, 0 or -1: see above */
} shared_ring_owner;
typedef struct shared_ring_owners {
    uint64_t ring_id; /* random, written by format */
    shared_ring_owner producer, consumer;
    uint32_t formatting; /* 1: a prepare is formatting the region now */
} shared_ring_owners;
/* Fill *out (zeroed on error). Either side, any process; never blocks.
   Returns: OK; ERR_ARG (region or out NULL, region_fd not a regular file); ERR_ALIGN; ERR_SIZE
   (smaller than the header); NOT_FORMATTED; ERR_MAGIC. */
SHARED_RING_API int shared_ring_owners_of(const void *region, size_t region_size, int region_fd,
                                          shared_ring_owners *out);

/* Copy this handle's counters to *out (zeroed on any error); a broken handle still reports.
   Producer / consumer handle respectively; never blocks.
   Returns: OK; ERR_ARG (out NULL); ERR_STATE; ERR_HANDLE. */
SHARED_RING_API int shared_ring_producer_stats(const shared_ring_producer *p,
                                               shared_ring_stats *out);
SHARED_RING_API int shared_ring_consumer_stats(const shared_ring_consumer *c,
                                               shared_ring_stats *out);

/* How full the ring is, seen from this side, in bytes of the data area: capacity, used (records
   not yet released by the consumer, padding included; the producer also counts what it has not
   published yet) and free (what the producer can still write before it must wait:
   capacity - 8 - used). A snapshot. The peer's position is read once, clamped into range, so a
   hostile peer cannot make it report more than the capacity. Producer / consumer handle
   respectively; never blocks; *out is zeroed on error.
   Returns: OK; ERR_ARG (out NULL); ERR_STATE; ERR_HANDLE. */
typedef struct shared_ring_usage {
    uint64_t capacity;
    uint64_t used;
    uint64_t free;
} shared_ring_usage;
SHARED_RING_API int shared_ring_producer_usage(const shared_ring_producer *p,
                                               shared_ring_usage *out);
SHARED_RING_API int shared_ring_consumer_usage(const shared_ring_consumer *c,
                                               shared_ring_usage *out);

/* max_message of the ring the handle is attached to, as read at attach; 0 if not attached.
   Producer / consumer handle respectively; never blocks. */
SHARED_RING_API size_t shared_ring_producer_max_message(const shared_ring_producer *p);
SHARED_RING_API size_t shared_ring_consumer_max_message(const shared_ring_consumer *c);

/* A short English description of a result code ("ok (count)" for a positive count, "unknown
   result" otherwise). Either side, any thread; never blocks; never NULL. */
SHARED_RING_API const char *shared_ring_result_string(int result);

/* Why this thread's last refused call was refused, naming the rule and numbers: every call
   returning a result below OK (errors and FULL, EMPTY, TIMEOUT, CLOSED, NOT_FORMATTED, PEER_GONE
   alike) sets it first, so it never describes an earlier call; success leaves it (like errno):
   read it right away. Either side; never blocks; never NULL ("" before any refusal). */
SHARED_RING_API const char *shared_ring_why(void);

/* How this build sleeps and wakes: "futex", "WaitOnAddress", "Sleep", "ulock", "naps" (short
   sleeps) or "spin" (SHARED_RING_NO_OS_WAIT); wait hooks given at attach replace it per handle.
   Either side; never blocks. */
SHARED_RING_API const char *shared_ring_wait_method(void);

#ifdef SHARED_RING_SHM
/* ---- shared memory between processes (define SHARED_RING_SHM) ------------
   Define it everywhere. POSIX: shm_open, memfd_create, mmap; build with -std=gnu11 or the feature
   macro section 6 names; link -lrt on glibc before 2.34. Windows: CreateFileMappingW /
   OpenFileMappingW / MapViewOfFile. Two programs that may start in any order: section 2. */
typedef struct shared_ring_shm {
    void *region; /* the mapping, page aligned */
    size_t size;  /* its bytes */
    int created;  /* 1: this call created the object */
    int fd;       /* POSIX: the descriptor, kept open until shm_close (pass
                     an anonymous one to the peer); -1 on Windows */
    void *handle; /* Windows: the file mapping handle; NULL elsewhere */
} shared_ring_shm;

/* Create the named object, or open it if it exists, and map it. `name`: "/name" for POSIX shm_open
   (at most 250 bytes), any UTF-8 name on Windows ("Local\\name"). `size`: the bytes to map
   (shared_ring_region_size); the creator sizes the object, and an opener checks its size (fstat)
   before touching the mapping (past the end is a SIGBUS), waiting up to timeout_ns until it is
   sized. size 0: open an existing object at its own size, waiting up to timeout_ns for it to
   appear. Created zero-filled: prepare it next. An object left at size 0 (its creator died before
   sizing it) is sized by an opener that knows the size. POSIX: created with mode
   SHARED_RING_SHM_MODE (default 0600); since another user's object could read or inject messages,
   an existing one is used only if this user owns it and it is open no wider than that mode (with a
   group or other mode, another user's object within it too). Either side. *shm is zeroed (fd -1)
   on failure. Returns: OK; TIMEOUT (not there, or not sized, in time); NOT_FORMATTED (timeout_ns
   0, and not there or not sized yet); ERR_SIZE (it exists with another size); ERR_ACCESS (another
   user's, or open wider than SHARED_RING_SHM_MODE); ERR_ARG (shm or name NULL, name too long);
   ERR_SYSTEM (the OS refused: errno or GetLastError says why). */
SHARED_RING_API int shared_ring_shm_open(shared_ring_shm *shm, const char *name, size_t size,
                                         uint64_t timeout_ns);

/* Anonymous shared memory of `size` bytes: Linux memfd_create; other POSIX systems shm_open a
   random name and unlink it at once; Windows an unnamed file mapping. Share it by fork, or pass
   shm->fd over a UNIX socket (SCM_RIGHTS) to a process that maps it with shared_ring_shm_map_fd
   (Windows: DuplicateHandle of shm->handle). Linux seals the memfd against shrinking and growing,
   so no process holding the descriptor can pull the memory from under a mapping. Either side.
   Returns: OK; ERR_ARG (shm NULL); ERR_SIZE (size 0); ERR_SYSTEM. */
SHARED_RING_API int shared_ring_shm_anonymous(shared_ring_shm *shm, size_t size);

/* Map a descriptor another process shared (its size from fstat; shm_close closes it). POSIX only;
   either side. Returns: OK; ERR_ARG (shm NULL, fd < 0, or on Windows); ERR_SIZE (smaller than a
   ring's header); ERR_SYSTEM. */
SHARED_RING_API int shared_ring_shm_map_fd(shared_ring_shm *shm, int fd);

/* Take the mapping's page faults now, not on the ring's first lap (a page's first touch costs a
   fault: microseconds, the first lap's latency tail). Reads a word of each page, so it changes
   nothing and may run while the peer writes. Each process maps on its own: call it in both, after
   open, anonymous or map_fd. Either side. Returns: OK; ERR_ARG (shm NULL or not mapped). */
SHARED_RING_API int shared_ring_shm_prefault(shared_ring_shm *shm);

/* Unmap and close; the object lives on until unlinked (Windows: until its last handle closes).
   Detach handles first. Either side. Returns: OK; ERR_ARG (shm NULL or not mapped); ERR_SYSTEM. */
SHARED_RING_API int shared_ring_shm_close(shared_ring_shm *shm);

/* Remove the name: processes that have it mapped keep their mapping; the next shm_open creates a
   new object. On Windows there is nothing to remove (OK). Either side. Returns: OK; ERR_ARG (name
   NULL or too long); ERR_SYSTEM (no such object: errno ENOENT; or refused). */
SHARED_RING_API int shared_ring_shm_unlink(const char *name);
#endif /* SHARED_RING_SHM */

#ifdef SHARED_RING_NOTIFIER
/* ---- a descriptor an event loop can wait on (define SHARED_RING_NOTIFIER) --
   Define it everywhere. Each side gets what its loop can wait on: an eventfd on Linux, a pipe
   elsewhere on POSIX, an auto-reset event on Windows. Attach each side with options from
   shared_ring_notifier_options: the peer's wake-ups then make its descriptor readable. A
   consumer's loop (n.fd[SHARED_RING_CONSUMER_END] in its epoll / poll / libuv / io_uring set):

       for (;;) {
           int r = shared_ring_read_some(&c, on_message, user);
           if (r == SHARED_RING_EMPTY) r = shared_ring_arm(&c);
           if (r >= 1) continue;                  // read (more) first
           if (r != SHARED_RING_OK) break;        // CLOSED, PEER_GONE, an error
           ... the loop sleeps until the descriptor is readable ...
           shared_ring_notifier_clear(&n, SHARED_RING_CONSUMER_END);
       }

   Blocking calls (a producer's write waiting for room, a consumer's read with a timeout) wait on
   the same descriptors. Between processes a notifier is just its descriptors: a process that has
   them (inherited by fork, or passed over a UNIX socket with SCM_RIGHTS: every distinct one of
   fd[] and signal_fd[]; Windows: DuplicateHandle of event[]) fills a shared_ring_notifier with
   them and uses it as its own. The notifier must outlive the handles attached with its options. */
enum { SHARED_RING_CONSUMER_END = 0, SHARED_RING_PRODUCER_END = 1 };
typedef struct shared_ring_notifier {
    int fd[2];        /* POSIX: wait for it to be readable: [CONSUMER_END] the consumer should
                         look (a message, the end, its peer gone), [PRODUCER_END] the producer
                         has room; -1 on Windows */
    int signal_fd[2]; /* POSIX: written to make fd[i] readable (the eventfd
                         itself, or the pipe's write end); -1 on Windows */
    void *event[2];   /* Windows: auto-reset events (WaitForMultipleObjects); NULL elsewhere */
} shared_ring_notifier;

/* Make the two descriptors (or events); *n is filled with -1 and NULL on failure. Either side.
   Returns: OK; ERR_ARG (n NULL); ERR_SYSTEM (errno / GetLastError). */
SHARED_RING_API int shared_ring_notifier_open(shared_ring_notifier *n);

/* Set o->wait, o->wake and o->hook_user for the side `end` (the rest of *o is left as it is);
   attach that side with *o. Either side; never blocks.
   Returns: OK; ERR_ARG (n or o NULL, or end neither CONSUMER_END nor PRODUCER_END). */
SHARED_RING_API int shared_ring_notifier_options(shared_ring_notifier *n, int end,
                                                 shared_ring_options *o);

/* After the loop saw fd[end] readable, before reading the ring: make it not readable again (read
   what was written). Either side, for its own end; never blocks.
   Returns: OK; ERR_ARG (n NULL, or a bad end). */
SHARED_RING_API int shared_ring_notifier_clear(shared_ring_notifier *n, int end);

/* Close the descriptors (events). Detach the handles first. Either side.
   Returns: OK; ERR_ARG (n NULL); ERR_SYSTEM (a close failed). */
SHARED_RING_API int shared_ring_notifier_close(shared_ring_notifier *n);

/* A notifier two programs started on their own share by name, with no descriptor passing: each end
   is a named FIFO (POSIX: mkfifo in /dev/shm on Linux, /tmp elsewhere, "NAME.consumer-wake" and
   "NAME.producer-wake", mode 0600), or a named auto-reset event on Windows
   ("Local\\/NAME.consumer-wake": the name keeps its "/"). Both programs call it with the same name
   (the ring's shm name serves), in any order, then attach with shared_ring_notifier_options and
   close with notifier_close. A restarted program opens it again; a wake-up left from before costs
   one spurious wake. The FIFOs outlive the programs: the last user removes them with
   shared_ring_notifier_unlink. Only this user's FIFOs that no one else may write are used. Either
   side; never blocks. *n is filled with -1 and NULL on failure.
   Returns: OK; ERR_ARG (n NULL; name NULL, not "/" and a name without another "/", or longer than
   200 bytes); ERR_ACCESS (a FIFO of that name is another user's, writable by others, or not a
   FIFO); ERR_SYSTEM (errno / GetLastError says why). */
SHARED_RING_API int shared_ring_notifier_open_named(shared_ring_notifier *n, const char *name);

/* Remove the named FIFOs (POSIX; Windows: nothing to remove, OK). Either side. Returns: OK;
   ERR_ARG (name as for open_named); ERR_SYSTEM (one was not there, or refused: errno says why). */
SHARED_RING_API int shared_ring_notifier_unlink(const char *name);
#endif /* SHARED_RING_NOTIFIER */

/* ---- the region's layout and the handles' magics (private) ---------------
   Byte offsets into the region (manual section 3), and what a handle's
   `magic` and `open` hold: here, before the inline fast path, which uses
   them as the implementation does. */
enum {
    SRNG_OFF_MAGIC = 0,
    SRNG_OFF_VERSION = 4,
    SRNG_OFF_CAPACITY = 8,
    SRNG_OFF_MAX_MESSAGE = 16,
    SRNG_OFF_DATA_OFFSET = 20,
    SRNG_OFF_RING_ID = 24,
    SRNG_OFF_ATTACHES = 32,
    SRNG_OFF_WRITE_POS = 128,
    SRNG_OFF_READ_POS = 256,
    SRNG_OFF_CORRUPT = 264,
    SRNG_OFF_CLOSE_SEEN = 268,
    SRNG_OFF_CONSUMER_SLEEPING = 384,
    SRNG_OFF_CONSUMER_WAIT_MODE = 392,
    SRNG_OFF_CONSUMER_BELL = 396,
    SRNG_OFF_CONSUMER_FENCELESS_FOR = 408,
    SRNG_OFF_PRODUCER_SLEEPING = 512,
    SRNG_OFF_PRODUCER_WAIT_MODE = 520,
    SRNG_OFF_CLOSED = 524,
    SRNG_OFF_PRODUCER_WAKE_POS = 528,
    SRNG_OFF_PRODUCER_FENCELESS_FOR = 536,
    SRNG_OFF_PRODUCER_BELLS = 544,
    SRNG_OFF_PRODUCER_ID = 640, /* owner word, attach id, identity slot */
    SRNG_OFF_CONSUMER_ID = 768
};
#define SRNG_PRODUCER_MAGIC 0x50524f44u
#define SRNG_CONSUMER_MAGIC 0x434f4e53u
#define SRNG_CLAIM_OPEN 0x434c4149u /* the producer's `open` while a plain claim is */
#define SRNG_NO_CLAIM UINT64_MAX    /* claim_len while none is (a claim is below 2^31) */

/* Casts a C++ build with -Wold-style-cast accepts: SRNG_CAST converts a
   value or a void pointer, SRNG_PUN reinterprets a pointer. */
#ifdef __cplusplus
#define SRNG_CAST(T, x) static_cast<T>(x)
#define SRNG_PUN(T, x) reinterpret_cast<T>(x)
#else
#define SRNG_CAST(T, x) ((T)(x))
#define SRNG_PUN(T, x) ((T)(x))
#endif
/* The inline fast path (GCC and Clang: the hot path, below the
   declarations). Private, exported for it: answer a peer found asleep (or
   just attached) on its sleeping word; go on reading from a record the
   fast path leaves to the implementation, after it delivered `delivered`
   (a read_some, or a blocking read with its timeout); prefetch ahead
   before a fenced publish. */
#if (defined(__GNUC__) || defined(__clang__)) && !defined(_MSC_VER)
#define SRNG_FAST_PATH 1
#endif
SHARED_RING_API void srng_answer(shared_ring_side *s, void *word);
SHARED_RING_API int srng_read_rest(shared_ring_consumer *c, shared_ring_read_fn fn, void *user,
                                   int delivered, int blocking, uint64_t timeout_ns);
SHARED_RING_API void srng_fenced_prefetch(const shared_ring_producer *p);

#ifdef __cplusplus
}
#endif
#if defined(__clang__)
#pragma clang diagnostic pop
#endif
#endif /* SHARED_RING_H */

/* ======================================================================== */
/* ---- the hot path (private): the record format, publish, release ---------
   One copy, used by the implementation and by the inline fast path: with
   GCC and Clang, write_bytes, claim, commit, read_some and read in their
   common case run inline in the caller, wherever the implementation was
   compiled, so a program that builds it in a file of its own (the stb way)
   pays no call for them. The common case: an open handle, a message that
   fits in the room the handle already knows is free, no cork, a plain
   claim, and for reads records that need no special care (no padding, no
   filler, not the lap's last), there now (a blocking read that does not
   trail: it would not wait). Every other case, and every call through a
   function pointer (&shared_ring_write_bytes is the function), goes to the
   implementation. Compiled in the implementation's file, and in every file
   that has the fast path; SHARED_RING_NO_INLINE turns the fast path off (in
   any file: the implementation exports what it calls either way). */
#if !defined(SRNG_HOT_DONE) && \
    (defined(SHARED_RING_IMPLEMENTATION) || (defined(SRNG_FAST_PATH) && !defined(SHARED_RING_NO_INLINE)))
#define SRNG_HOT_DONE
#if defined(__clang__) /* as in the declarations above */
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wcast-align"
#endif
#include <limits.h>
#include <string.h>

/* ---- atomics ------------------------------------------------------------
   GCC and Clang: their __atomic builtins on plain words, so that a user's
   file (C99 or C++, inside extern "C" or not) gets no <stdatomic.h> or
   <atomic> from the fast path. Elsewhere, only in the implementation's
   file: C11 <stdatomic.h>, or <atomic> when compiled as C++. */
/* The full fence (a store, then a load of another word). On x86, with GCC or Clang (clang-cl
   too), a locked no-op or of the stack, as GCC emits (Linux's smp_mb is the same kind): Clang's
   mfence, in both its modes, made a 64-byte message between processes 8x slower on an AMD EPYC
   (docs/benchmarks.md). Both asm dialects (-masm=intel). ThreadSanitizer sees only the builtin.
   Elsewhere each branch below makes it the language's seq_cst fence. */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SRNG_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define SRNG_TSAN 1
#endif
/* GCC or Clang compiling x86 code (ARM64EC defines __x86_64__ but runs Arm code). */
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__)) && \
    !defined(_M_ARM64EC) && !defined(__arm64ec__)
#define SRNG_X86_ASM 1
#endif
#if defined(SRNG_FENCE) /* a test's own, which watches each fence */
#elif defined(SRNG_X86_ASM) && defined(__x86_64__) && !defined(SRNG_TSAN)
#define SRNG_FENCE() \
    __asm__ __volatile__("lock {orq $0, (%%rsp)|or qword ptr [rsp], 0}" ::: "memory", "cc")
#elif defined(SRNG_X86_ASM) && !defined(SRNG_TSAN) /* i386 */
#define SRNG_FENCE() \
    __asm__ __volatile__("lock {orl $0, (%%esp)|or dword ptr [esp], 0}" ::: "memory", "cc")
#endif
#if defined(SRNG_FAST_PATH)
typedef uint64_t srng_au64 __attribute__((aligned(8))); /* 8 on 32-bit x86 too */
typedef uint32_t srng_au32;
#define SRNG_ORDER_relaxed __ATOMIC_RELAXED
#define SRNG_ORDER_acquire __ATOMIC_ACQUIRE
#define SRNG_ORDER_release __ATOMIC_RELEASE
#define SRNG_LOAD(ptr, order) __atomic_load_n((ptr), SRNG_ORDER_##order)
#define SRNG_STORE(ptr, v, order) __atomic_store_n((ptr), (v), SRNG_ORDER_##order)
#define SRNG_XCHG(ptr, v, order) __atomic_exchange_n((ptr), (v), SRNG_ORDER_##order)
#define SRNG_ADD(ptr, v, order) __atomic_fetch_add((ptr), (v), SRNG_ORDER_##order)
#define SRNG_CAS(ptr, expected, v) \
    __atomic_compare_exchange_n((ptr), &(expected), (v), 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)
#ifndef SRNG_FENCE
#define SRNG_FENCE() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#endif
#define SRNG_COMPILER_BARRIER() __atomic_signal_fence(__ATOMIC_SEQ_CST)
#if __GCC_ATOMIC_LLONG_LOCK_FREE != 2
#error "shared_ring.h needs lock-free 64-bit atomics on this target"
#endif
#if __GCC_ATOMIC_INT_LOCK_FREE != 2
#error "shared_ring.h needs lock-free 32-bit atomics on this target"
#endif
#elif defined(__cplusplus)
#include <atomic>
typedef std::atomic<uint64_t> srng_au64;
typedef std::atomic<uint32_t> srng_au32;
#define SRNG_LOAD(ptr, order) (ptr)->load(std::memory_order_##order)
#define SRNG_STORE(ptr, v, order) (ptr)->store((v), std::memory_order_##order)
#define SRNG_XCHG(ptr, v, order) (ptr)->exchange((v), std::memory_order_##order)
#define SRNG_ADD(ptr, v, order) (ptr)->fetch_add((v), std::memory_order_##order)
#define SRNG_CAS(ptr, expected, v)                                             \
    (ptr)->compare_exchange_strong((expected), (v), std::memory_order_acq_rel, \
                                   std::memory_order_acquire)
#ifndef SRNG_FENCE
#define SRNG_FENCE() std::atomic_thread_fence(std::memory_order_seq_cst)
#endif
#define SRNG_COMPILER_BARRIER() std::atomic_signal_fence(std::memory_order_seq_cst)
#else
#include <stdatomic.h>
typedef _Atomic uint64_t srng_au64;
typedef _Atomic uint32_t srng_au32;
#define SRNG_LOAD(ptr, order) atomic_load_explicit((ptr), memory_order_##order)
#define SRNG_STORE(ptr, v, order) atomic_store_explicit((ptr), (v), memory_order_##order)
#define SRNG_XCHG(ptr, v, order) atomic_exchange_explicit((ptr), (v), memory_order_##order)
#define SRNG_ADD(ptr, v, order) atomic_fetch_add_explicit((ptr), (v), memory_order_##order)
#define SRNG_CAS(ptr, expected, v)                                                         \
    atomic_compare_exchange_strong_explicit((ptr), &(expected), (v), memory_order_acq_rel, \
                                            memory_order_acquire)
#ifndef SRNG_FENCE
#define SRNG_FENCE() atomic_thread_fence(memory_order_seq_cst)
#endif
#define SRNG_COMPILER_BARRIER() atomic_signal_fence(memory_order_seq_cst)
#endif
#if !defined(SRNG_FAST_PATH) && (!defined(ATOMIC_LLONG_LOCK_FREE) || ATOMIC_LLONG_LOCK_FREE != 2)
#error "shared_ring.h needs lock-free 64-bit atomics on this target"
#endif
#if !defined(SRNG_FAST_PATH) && (!defined(ATOMIC_INT_LOCK_FREE) || ATOMIC_INT_LOCK_FREE != 2)
#error "shared_ring.h needs lock-free 32-bit atomics on this target"
#endif

/* A scheduling point at each load and store of a control word. Nothing in
   a release build; tests/interleave.c defines it to hand each step to a
   driver that chooses which process moves next. */
#ifndef SRNG_SCHED_POINT
#define SRNG_SCHED_POINT(what) ((void)0)
#endif

/* SRNG_COLD: an error path kept out of line, so that inlining it does not
   use up the budget that the hot path's callers need (it cost 8
   instructions per message in make instructions). */
#if defined(__GNUC__) || defined(__clang__)
#define SRNG_INLINE static inline __attribute__((always_inline))
#define SRNG_COLD static __attribute__((noinline, cold))
#define SRNG_NOINLINE static __attribute__((noinline))
#define SRNG_LIKELY(x) __builtin_expect(!!(x), 1)
#elif defined(_MSC_VER)
#define SRNG_INLINE static __forceinline
#define SRNG_COLD static __declspec(noinline)
#define SRNG_NOINLINE static __declspec(noinline)
#define SRNG_LIKELY(x) (x)
#else
#define SRNG_INLINE static inline
#define SRNG_COLD static
#define SRNG_NOINLINE static
#define SRNG_LIKELY(x) (x)
#endif
#if !defined(SRNG_PREFETCH) /* a test may watch it */
#if defined(__GNUC__) || defined(__clang__)
#define SRNG_PREFETCH(addr) __builtin_prefetch(addr)
#else
#define SRNG_PREFETCH(addr) ((void)(addr))
#endif
#endif

SRNG_INLINE srng_au64 *srng_u64_at(unsigned char *region, unsigned off) {
    return SRNG_PUN(srng_au64 *, region + off);
}
SRNG_INLINE srng_au32 *srng_u32_at(unsigned char *region, unsigned off) {
    return SRNG_PUN(srng_au32 *, region + off);
}

/* A record is a header word and its payload, padded to 8 bytes. The
   header: the length in the low half, and in the high half a tag that says
   "published at this position": the low 32 bits of the position with bit
   0 set (positions are multiples of 8). The tag is never 0, so the zero
   word the producer leaves where its next record will go (and any zeroed
   memory) never reads as a record; and it changes with the position, so a
   header left from an earlier lap (of a ring below 4 GiB) does not match
   either. One word, stored in one piece: never seen torn. Two lengths are
   not messages: padding (to the lap's end) and a filler before an aligned
   claim's record: 0xFFFFFFF0 | its size in 8-byte words (1 to 7), header
   included (max_message is below 2^31). */
#define SRNG_REC_HEADER 8u
#define SRNG_PAD_LEN 0xFFFFFFFFu
#define SRNG_FILL_LEN(bytes) (0xFFFFFFF0u | ((bytes) >> 3)) /* bytes: a uint32_t */
#define SRNG_IS_FILL(len) ((len) >= 0xFFFFFFF1u && (len) <= 0xFFFFFFF7u)
#define SRNG_FILL_SIZE(len) (SRNG_CAST(uint64_t, (len) & 7u) << 3)

SRNG_INLINE uint64_t srng_record_size(uint64_t len) {
    return (len + SRNG_REC_HEADER + 7u) & ~SRNG_CAST(uint64_t, 7u); /* two instructions */
}
SRNG_INLINE uint32_t srng_tag(uint64_t pos) {
    return SRNG_CAST(uint32_t, pos + 1u); /* = pos | 1 for a multiple of 8, in one lea */
}
SRNG_INLINE uint64_t srng_header(uint64_t pos, uint32_t len) {
    return SRNG_CAST(uint64_t, srng_tag(pos)) << 32 | len;
}
/* Is position a past b? Positions are 64-bit counters that may wrap (a region may start them
   anywhere), so never a < or > of the two: a distance under 2^63. */
SRNG_INLINE int srng_is_past(uint64_t a, uint64_t b) {
    return a != b && a - b < (SRNG_CAST(uint64_t, 1) << 63);
}
SRNG_INLINE srng_au64 *srng_slot(const shared_ring_side *s, uint64_t pos) {
    return SRNG_PUN(srng_au64 *, s->data + (pos & s->mask));
}
/* Where the payload of a record at `pos` begins. */
SRNG_INLINE unsigned char *srng_payload(const shared_ring_side *s, uint64_t pos) {
    return s->data + (pos & s->mask) + SRNG_REC_HEADER;
}

/* A callback (fill, read, wait or wake hook) runs with the handle marked
   busy: every call on the handle from inside it returns ERR_STATE instead
   of touching state the interrupted call is still using. `open` (the
   one-word fast-path gate) is cleared for the duration and set back to
   `open` after: the side's magic where the caller had passed the gate (a
   constant, so nothing stays live across a read loop's callbacks), the
   saved word around a hook. */
SRNG_INLINE void srng_enter_callback(shared_ring_side *s) {
    s->open = 0;
    s->busy = 1;
}
SRNG_INLINE void srng_leave_callback(shared_ring_side *s, uint32_t open) {
    s->busy = 0;
    s->open = open;
}

/* Order our position store before the load of the peer's sleeping word:
   a full fence, or only the compiler's when the sleeper's membarrier does
   the fencing for us. */
SRNG_INLINE void srng_publish_barrier(const shared_ring_side *s) {
    if (s->fenceless)
        SRNG_COMPILER_BARRIER();
    else
        SRNG_FENCE();
}

/* Wake the peer sleeping on `word`, if it announced itself (srng_answer,
   out of line, takes the word and makes the one wake-up call). */
SRNG_INLINE void srng_wake_sleeper(shared_ring_side *s, srng_au32 *word) {
    if (SRNG_LOAD(word, relaxed) != 0u) srng_answer(s, word);
}

SRNG_INLINE void srng_count_message(shared_ring_stats *st, size_t len) {
    st->messages++;
    st->bytes += len;
    if (len > st->largest) st->largest = len;
}

/* Publish, with nothing held back, the record begun at `pos` (write_pos,
   loaded by a caller that copied the payload in: the compiler cannot tell
   that copy from a store to *p): `len` bytes at `payload`, after a filler
   of `skip` bytes (an aligned claim's). Count it; zero the word after it,
   where the consumer looks next (it must not find an earlier lap's bytes
   there); store its header (release: after the payload), and the filler's
   after it (a consumer that sees the filler sees the record); when fenced,
   prefetch ahead (srng_fenced_prefetch); then
   write_pos, and look at the consumer's sleeping word: after a fence, or
   when fenceless after the compiler's barrier only (the sleeper's
   membarrier fences). `fenced` and `skip` are constants at each call. */
SRNG_INLINE void srng_publish_direct(shared_ring_producer *p, uint64_t pos, unsigned char *payload,
                                     size_t len, uint32_t skip, int fenced) {
    uint64_t rec = srng_record_size(len) + skip, next = pos + rec;
    /* the region's header, from `data` (loaded anyway), not reloaded from
       the handle: the stores below may alias it */
    unsigned char *region = p->s.data - SHARED_RING_HEADER_SIZE;
    uint64_t header = srng_header(pos + skip, SRNG_CAST(uint32_t, len));
    srng_count_message(&p->s.stats, len);
    SRNG_STORE(srng_slot(&p->s, next), 0u, relaxed);
    if (skip != 0) {
        SRNG_STORE(SRNG_PUN(srng_au64 *, payload - SRNG_REC_HEADER), header, relaxed);
        SRNG_STORE(srng_slot(&p->s, pos), srng_header(pos, SRNG_FILL_LEN(skip)), release);
    } else {
        SRNG_STORE(SRNG_PUN(srng_au64 *, payload - SRNG_REC_HEADER), header, release);
    }
    p->write_pos = next; /* and, while direct, implicitly published */
    if (fenced) p->published = next;
    p->fast_left -= rec; /* the caller found it this long at least */
    if (fenced) srng_fenced_prefetch(p);
    SRNG_STORE(srng_u64_at(region, SRNG_OFF_WRITE_POS), next, release);
    SRNG_SCHED_POINT("publish");
    if (fenced)
        SRNG_FENCE();
    else
        SRNG_COMPILER_BARRIER();
    srng_wake_sleeper(&p->s, srng_u32_at(region, SRNG_OFF_CONSUMER_SLEEPING));
}

/* A read in progress: where it is (pos, its offset), the room it may
   cover without a closer look (`left`: to the lap's end, to a capacity
   past read_pos, and to the count an int can return, whichever is least),
   and what it delivered. Locals of the reader, in registers: the callback
   is opaque, so fields of the handle would be reloaded after it. */
typedef struct srng_reading {
    uint64_t pos, off, left, bytes, largest, header;
    int count;
} srng_reading;
enum { SRNG_SCAN_UNPUBLISHED, SRNG_SCAN_STOPPED, SRNG_SCAN_OTHER };

/* Hand the message of `rec` bytes at r->pos to fn and count it. */
SRNG_INLINE int srng_hand_over(srng_reading *r, unsigned char *payload, uint64_t rec, uint32_t len,
                               shared_ring_read_fn fn, void *user) {
    r->pos += rec;
    r->off += rec;
    r->left -= rec;
    r->count++;
    r->bytes += len;
    if (len > r->largest) r->largest = len;
    return fn(user, payload, len);
}

/* The one parse of the messages that need no care: hand fn each record
   from r->pos whose header word (loaded once, acquire: it was stored after
   the payload; only that copy is checked and used) says published here,
   a length of at most `max`, and a record that ends before r->left does.
   Stops at a record not published yet (UNPUBLISHED), when fn asks
   (STOPPED), or at any other record (OTHER: its header word in r->header,
   for the caller's closer look). */
SRNG_INLINE int srng_scan(unsigned char *data, uint32_t max, srng_reading *r,
                          shared_ring_read_fn fn, void *user) {
    for (;;) {
        uint64_t h = SRNG_LOAD(SRNG_PUN(srng_au64 *, data + r->off), acquire), rec;
        uint32_t len = SRNG_CAST(uint32_t, h);
        if (SRNG_CAST(uint32_t, h >> 32) != srng_tag(r->pos)) return SRNG_SCAN_UNPUBLISHED;
        rec = srng_record_size(len);
        if (!SRNG_LIKELY(len <= max && rec < r->left)) {
            r->header = h;
            return SRNG_SCAN_OTHER;
        }
        if (srng_hand_over(r, data + r->off + SRNG_REC_HEADER, rec, len, fn, user) != 0)
            return SRNG_SCAN_STOPPED;
    }
}

/* Release everything before `pos` to the producer: read_pos (release),
   then, ordered after it, a look at the producer's sleeping word; wake it
   only once it has the room it asked for (hysteresis; acquire: its wake
   position was stored before its announcement): pos at or past it. */
SRNG_INLINE void srng_release_to(shared_ring_consumer *c, uint64_t pos) {
    unsigned char *region = c->s.data - SHARED_RING_HEADER_SIZE;
    srng_au32 *word = srng_u32_at(region, SRNG_OFF_PRODUCER_SLEEPING);
    if (pos == c->read_pos) return;
    c->read_pos = pos;
    SRNG_STORE(srng_u64_at(region, SRNG_OFF_READ_POS), pos, release);
    SRNG_SCHED_POINT("release");
    srng_publish_barrier(&c->s);
    if (SRNG_LOAD(word, acquire) != 0u) {
        uint64_t wake_pos = SRNG_LOAD(srng_u64_at(region, SRNG_OFF_PRODUCER_WAKE_POS), relaxed);
        if (pos == wake_pos || srng_is_past(pos, wake_pos)) srng_answer(&c->s, word);
    }
}

/* Is the region still the ring the handle attached to? A format under a live handle (misuse)
   leaves the old ring's records in place: a wait says ERR_CORRUPT rather than deliver them, and
   so does the inline read. A word written at format time only: the line stays in our cache. */
SRNG_INLINE int srng_ring_id_holds(const shared_ring_side *s) {
    return SRNG_LOAD(srng_u64_at(s->region, SRNG_OFF_RING_ID), relaxed) == s->ring_id;
}

#ifdef SRNG_FAST_PATH
/* ---- the inline fast path ------------------------------------------------ */

/* Not direct only because it fences (to a consumer in another process):
   uncorked, nothing held back. Published at once, like a direct record. */
SRNG_INLINE int srng_fenced_direct(const shared_ring_producer *p) {
    return p->direct == 0u && p->cork_depth == 0u && p->published == p->write_pos;
}

/* May the fast path write `len` bytes from `data` now, publishing with a
   fence or without? */
SRNG_INLINE int srng_fast_fits(const shared_ring_producer *p, const void *data, size_t len,
                               int fenced) {
    return p != SHARED_RING_NULLPTR && p->s.open == SRNG_PRODUCER_MAGIC &&
           (fenced ? srng_fenced_direct(p) : p->direct != 0u) && len <= p->s.max_message &&
           data != SHARED_RING_NULLPTR && srng_record_size(len) <= p->fast_left;
}

SRNG_INLINE int srng_write_direct(shared_ring_producer *p, const void *data, size_t len,
                                  int fenced) {
    uint64_t pos = p->write_pos;
    unsigned char *payload = srng_payload(&p->s, pos);
    memcpy(payload, data, len);
    srng_publish_direct(p, pos, payload, len, 0, fenced);
    return SHARED_RING_OK;
}

static inline int srng_write_bytes_fast(shared_ring_producer *p, const void *data, size_t len,
                                        uint64_t timeout_ns) {
    if (SRNG_LIKELY(srng_fast_fits(p, data, len, 0))) return srng_write_direct(p, data, len, 0);
    if (srng_fast_fits(p, data, len, 1)) return srng_write_direct(p, data, len, 1);
    return (shared_ring_write_bytes)(p, data, len, timeout_ns);
}

/* claim and commit in the direct case (no cork, nothing held back, with or
   without a fence) with room already known to be free. While a plain claim
   is open `open` says so (SRNG_CLAIM_OPEN: write paths refuse, a commit
   may go inline); else it is 0 or the magic. */
static inline int srng_claim_fast(shared_ring_producer *p, size_t len, void **out,
                                  uint64_t timeout_ns) {
    if (!srng_fast_fits(p, out, len, 0) && !srng_fast_fits(p, out, len, 1))
        return (shared_ring_claim)(p, len, out, timeout_ns);
    *out = srng_payload(&p->s, p->write_pos);
    p->claim_len = len; /* claim_skip is 0: no aligned claim is open */
    p->s.open = SRNG_CLAIM_OPEN;
    return SHARED_RING_OK;
}

/* May the fast path commit `len` bytes of the open claim? Not yet asked:
   whether it may publish without a fence. */
SRNG_INLINE int srng_fast_commits(const shared_ring_producer *p, size_t len) {
    return p->s.open == SRNG_CLAIM_OPEN && len <= p->claim_len;
}

SRNG_INLINE int srng_commit_direct(shared_ring_producer *p, size_t len, int fenced) {
    p->claim_len = SRNG_NO_CLAIM;
    p->s.open = SRNG_PRODUCER_MAGIC; /* not broken, not closed, not busy: it was CLAI */
    srng_publish_direct(p, p->write_pos, srng_payload(&p->s, p->write_pos), len, 0, fenced);
    return SHARED_RING_OK;
}

static inline int srng_commit_fast(shared_ring_producer *p, size_t len) {
    if (SRNG_LIKELY(p != SHARED_RING_NULLPTR && p->direct && srng_fast_commits(p, len)))
        return srng_commit_direct(p, len, 0);
    if (p != SHARED_RING_NULLPTR && srng_fenced_direct(p) && srng_fast_commits(p, len))
        return srng_commit_direct(p, len, 1);
    return (shared_ring_commit)(p, len);
}

/* The whole call out of line: read_some, or (`blocking`) read. */
SRNG_INLINE int srng_read_out_of_line(shared_ring_consumer *c, shared_ring_read_fn fn, void *user,
                                      int blocking, uint64_t timeout_ns) {
    return blocking ? (shared_ring_read)(c, fn, user, timeout_ns)
                    : (shared_ring_read_some)(c, fn, user);
}

/* read_some, and read (`blocking`) when messages are there and it does not trail (it would
   neither wait nor count a wait): the messages srng_scan takes, then the release; a record it
   leaves after some (padding, a filler, the lap's last record, one to refuse) goes on in the
   implementation, in the same call. Finding none, or a trailing read (it holds off first), goes
   there whole. */
SRNG_INLINE int srng_read_fast(shared_ring_consumer *c, shared_ring_read_fn fn, void *user,
                               int blocking, uint64_t timeout_ns) {
    srng_reading r;
    uint64_t limit_left;
    int why;
    if (c == SHARED_RING_NULLPTR || c->s.open != SRNG_CONSUMER_MAGIC || fn == SHARED_RING_NULLPTR ||
        (blocking && (c->trailing || !srng_ring_id_holds(&c->s))))
        return srng_read_out_of_line(c, fn, user, blocking, timeout_ns);
    r.pos = c->peek_pos;
    r.off = r.pos & c->s.mask;
    r.left = c->s.capacity - r.off;                     /* to the end of the lap */
    limit_left = c->read_pos + c->s.capacity - r.pos; /* to a capacity past read_pos */
    if (limit_left < r.left) r.left = limit_left;
    /* a record takes at least 8 bytes: fewer than INT_MAX of them fit */
    if (r.left > SRNG_CAST(uint64_t, INT_MAX) * 8u) r.left = SRNG_CAST(uint64_t, INT_MAX) * 8u;
    r.bytes = 0;
    r.largest = c->s.stats.largest;
    r.count = 0;
    srng_enter_callback(&c->s);
    why = srng_scan(c->s.data, c->s.max_message, &r, fn, user);
    srng_leave_callback(&c->s, SRNG_CONSUMER_MAGIC);
    c->peek_pos = r.pos;
    c->s.stats.messages += SRNG_CAST(uint64_t, r.count);
    c->s.stats.bytes += r.bytes;
    c->s.stats.largest = r.largest;
    if (why == SRNG_SCAN_OTHER) return srng_read_rest(c, fn, user, r.count, blocking, timeout_ns);
    if (r.count == 0) return srng_read_out_of_line(c, fn, user, blocking, timeout_ns);
    c->peeked = 0;
    srng_release_to(c, r.pos);
    return r.count;
}

static inline int srng_read_some_fast(shared_ring_consumer *c, shared_ring_read_fn fn,
                                      void *user) {
    return srng_read_fast(c, fn, user, 0, 0u);
}

static inline int srng_read_blocking_fast(shared_ring_consumer *c, shared_ring_read_fn fn,
                                          void *user, uint64_t timeout_ns) {
    return srng_read_fast(c, fn, user, 1, timeout_ns);
}

/* In every file, the implementation's too: a single-file program (the
   quick starts) would otherwise call the whole out-of-line function, which
   the compiler does not inline (283 instructions a message at gcc -O2, not
   ~200; bench/instructions.sh). */
#if !defined(SHARED_RING_NO_INLINE)
#define shared_ring_write_bytes(p, data, len, timeout_ns) \
    srng_write_bytes_fast(p, data, len, timeout_ns)
#define shared_ring_read_some(c, fn, user) srng_read_some_fast(c, fn, user)
#define shared_ring_read(c, fn, user, timeout_ns) srng_read_blocking_fast(c, fn, user, timeout_ns)
#define shared_ring_claim(p, len, out, timeout_ns) srng_claim_fast(p, len, out, timeout_ns)
#define shared_ring_commit(p, len) srng_commit_fast(p, len)
#endif
#endif /* SRNG_FAST_PATH */
#if defined(__clang__)
#pragma clang diagnostic pop
#endif
#endif /* SRNG_HOT_DONE */


/* ======================================================================== */
/*                             IMPLEMENTATION                               */
/* ======================================================================== */
#ifdef SHARED_RING_IMPLEMENTATION
#ifndef SHARED_RING_IMPLEMENTATION_DONE
#if defined(__clang__) /* as in the declarations above */
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wcast-align"
#endif
#define SHARED_RING_IMPLEMENTATION_DONE

#if defined(__cplusplus) ? (__cplusplus < 201103L && !defined(_MSC_VER)) \
                         : (!defined(__STDC_VERSION__) || __STDC_VERSION__ < 201112L)
#error "the shared_ring.h implementation needs C11 (<stdatomic.h>) or C++11 (<atomic>)"
#endif

#include <string.h>
#include <limits.h>
#include <time.h>

#ifndef SHARED_RING_ASSERT
#include <assert.h>
#define SHARED_RING_ASSERT(x) assert(x)
#endif

#define SRNG_NULL SHARED_RING_NULLPTR
#ifdef __cplusplus
#define SRNG_STATIC_ASSERT(c, m) static_assert(c, m)
#else
#define SRNG_STATIC_ASSERT(c, m) _Static_assert(c, m)
#endif

SRNG_STATIC_ASSERT(sizeof(srng_au64) == 8, "64-bit atomic must be 8 bytes");
SRNG_STATIC_ASSERT(sizeof(srng_au32) == 4, "32-bit atomic must be 4 bytes");
SRNG_STATIC_ASSERT(sizeof(shared_ring_producer) == sizeof(shared_ring_consumer),
                   "handles of both sides have one size (wrong-side checks stay in bounds)");

/* ---- layout: byte offsets into the region (see manual section 3) ------- */
/* The offsets themselves come before the inline fast path, which uses them. */
/* Offsets inside a side's block: its owner word, its attach id, and the
   identity of the word's holder, written by the holder right after its
   move (no one else writes it: a write before the move could land over
   the identity of a rival that moved first). */
enum { SRNG_ID_OWNER = 0, SRNG_ID_ATTACH = 8, SRNG_ID_SLOT = 16, SRNG_ID_END = 32 };
#define SRNG_ID_CLAIMING (SRNG_CAST(uint64_t, 1) << 63) /* an attach id's mark while a claim runs */
/* Offsets inside the identity slot: whose it is (the owner word without
   its state: a slot that names another word, a former holder's or none
   yet, is never taken for the holder's) and its pid namespace. */
enum { SRNG_SLOT_WHO = 0, SRNG_SLOT_NS = 8 };
/* Each side's wait words sit in one order: sleeping, wait mode, and 24
   bytes on, fenceless_for, so a side's other wait words are found from its
   sleeping word (srng_beside): the waker finds the sleeper's mode next to
   the word it sleeps on, the sleeper the waker's barrier choice. */
enum { SRNG_MODE_WORD = 2, SRNG_BELL_WORD = 3, SRNG_FENCELESS_FOR_WORD = 6 }; /* 32-bit words after sleeping */
SRNG_STATIC_ASSERT(SRNG_OFF_CONSUMER_BELL - SRNG_OFF_CONSUMER_SLEEPING == 4 * SRNG_BELL_WORD,
                   "the consumer's bell beside its sleeping word");
SRNG_STATIC_ASSERT(SRNG_OFF_CONSUMER_FENCELESS_FOR - SRNG_OFF_CONSUMER_SLEEPING ==
                           4 * SRNG_FENCELESS_FOR_WORD &&
                       SRNG_OFF_PRODUCER_FENCELESS_FOR - SRNG_OFF_PRODUCER_SLEEPING ==
                           4 * SRNG_FENCELESS_FOR_WORD,
                   "fenceless_for at the same place beside each sleeping word");
SRNG_STATIC_ASSERT(SRNG_OFF_CONSUMER_WAIT_MODE - SRNG_OFF_CONSUMER_SLEEPING == 4 * SRNG_MODE_WORD &&
                       SRNG_OFF_PRODUCER_WAIT_MODE - SRNG_OFF_PRODUCER_SLEEPING ==
                           4 * SRNG_MODE_WORD,
                   "wait mode at the same place beside each sleeping word");
/* Each 128-byte block (an adjacent-line prefetch pair) has one writer and
   one pace: what a side writes per message or per batch never shares a
   block with what the other side reads per message. */
SRNG_STATIC_ASSERT(SRNG_OFF_READ_POS - SRNG_OFF_WRITE_POS == 128,
                   "producer and consumer positions must be a cache-line pair apart");
SRNG_STATIC_ASSERT(SRNG_OFF_CONSUMER_SLEEPING - SRNG_OFF_READ_POS == 128,
                   "the word the producer reads per message must not share read_pos's lines");
SRNG_STATIC_ASSERT(SRNG_OFF_PRODUCER_SLEEPING - SRNG_OFF_CONSUMER_SLEEPING == 128,
                   "each side's wait words in a block of their own");
SRNG_STATIC_ASSERT(SRNG_OFF_PRODUCER_WAKE_POS % 8 == 0 && SRNG_OFF_ATTACHES % 8 == 0 &&
                       SRNG_OFF_PRODUCER_FENCELESS_FOR % 8 == 0 &&
                       SRNG_OFF_CONSUMER_FENCELESS_FOR % 8 == 0 && SRNG_ID_ATTACH % 8 == 0,
                   "64-bit fields 8-aligned");
SRNG_STATIC_ASSERT(SRNG_OFF_PRODUCER_ID % 128 == 0 && SRNG_OFF_CONSUMER_ID % 128 == 0 &&
                       SRNG_OFF_CONSUMER_ID + 128 <= SHARED_RING_HEADER_SIZE,
                   "each identity in a block of its own, inside the header");
SRNG_STATIC_ASSERT(SHARED_RING_HEADER_SIZE % 128 == 0, "data area on a line pair");

#if defined(__cplusplus)
#define SRNG_THREAD_LOCAL thread_local
#elif defined(_MSC_VER)
#define SRNG_THREAD_LOCAL __declspec(thread)
#else
#define SRNG_THREAD_LOCAL _Thread_local
#endif
/* The refusal's reason is stored by calls a real-time side makes (EMPTY,
   FULL): in a library loaded with dlopen, the default TLS model could
   allocate the thread's block at its first store. initial-exec takes a
   few bytes of the static TLS space instead (ELF; elsewhere the default). */
#if (defined(__GNUC__) || defined(__clang__)) && defined(__ELF__)
#define SRNG_TLS_MODEL __attribute__((tls_model("initial-exec")))
#else
#define SRNG_TLS_MODEL
#endif

/* ---- why a call was refused (shared_ring_why) ----------------------------- */
/* This thread's last refusal: a fixed text (one pointer store, so a poll finding the ring empty or
   full pays no copy) or srng_why_text when it carries numbers. Every path returning below OK sets
   it, so why() never names an earlier refusal. */
static SRNG_THREAD_LOCAL const char *srng_why_said SRNG_TLS_MODEL;
static SRNG_THREAD_LOCAL char srng_why_text[200];

/* Say `why` with each %u / %o replaced by the next number in decimal / octal. Error paths only; no
   stdio (size_t's printf letter is not every C library's). */
SRNG_COLD void srng_say(const char *why, uint64_t n0, uint64_t n1, uint64_t n2) {
    const uint64_t n[3] = { n0, n1, n2 };
    char digits[24];
    size_t at = 0, next = 0;
    for (; *why != 0 && at + sizeof digits < sizeof srng_why_text; why++) {
        if (why[0] == '%' && (why[1] == 'u' || why[1] == 'o') && next < 3) {
            unsigned base = why[1] == 'u' ? 10u : 8u, k = 0;
            uint64_t x = n[next++];
            do digits[k++] = SRNG_CAST(char, '0' + x % base);
            while ((x /= base) != 0);
            while (k > 0) srng_why_text[at++] = digits[--k];
            why++;
        } else {
            srng_why_text[at++] = *why;
        }
    }
    srng_why_text[at] = 0;
    srng_why_said = srng_why_text;
}
/* Say why and return `result` (inline: the caller's compiler sees which result comes back). */
SRNG_INLINE int srng_explain(int result, const char *why, uint64_t n0, uint64_t n1, uint64_t n2) {
    srng_say(why, n0, n1, n2);
    return result;
}
/* Say a fixed `why` (a string literal) and return `result`. */
SRNG_INLINE int srng_refuse(int result, const char *why) {
    srng_why_said = why;
    return result;
}

/* A region unfit to hold a header: NULL, not 8-byte aligned, or too small (attach, owners_of). */
static int srng_region_refusal(const void *region, size_t region_size) {
    if (region == SRNG_NULL) return srng_refuse(SHARED_RING_ERR_ARG, "region is NULL");
    if ((SRNG_PUN(uintptr_t, region) & 7u) != 0)
        return srng_refuse(SHARED_RING_ERR_ALIGN, "region is not 8-byte aligned");
    if (region_size < SHARED_RING_HEADER_SIZE)
        return srng_explain(SHARED_RING_ERR_SIZE, "region_size %u is below the %u-byte header",
                            region_size, SHARED_RING_HEADER_SIZE, 0);
    return SHARED_RING_OK;
}

/* A foreign magic: 0 is not formatted yet (also while a format runs), else no ring of ours. */
static int srng_magic_refusal(uint32_t magic) {
    if (magic == 0u)
        return srng_refuse(SHARED_RING_NOT_FORMATTED,
                           "the region is not formatted yet (its magic is 0), or being formatted");
    return srng_explain(SHARED_RING_ERR_MAGIC, "the region's magic is %u, not a ring's", magic, 0, 0);
}

static const char srng_gone_text[] = "the peer detached, or its process died";

SHARED_RING_API const char *shared_ring_why(void) { return srng_why_said != SRNG_NULL ? srng_why_said : ""; }

#define SRNG_REC_BAD 1u /* srng_record_at: corrupt (never a record size) */
#define SRNG_NO_LIMIT UINT64_MAX /* srng_deliver: every published message */
#define SRNG_MIN_CAPACITY 64u
#define SRNG_MAX_MESSAGE_LIMIT 0x7FFFFFF8u

/* The wait word `which` of the side whose sleeping word is `sleeping`. */
static srng_au32 *srng_beside(srng_au32 *sleeping, unsigned which) { return sleeping + which; }

/* Plain header fields are written once by format and read once by attach. */
static uint32_t srng_get32(const unsigned char *region, unsigned off) {
    uint32_t v;
    memcpy(&v, region + off, sizeof v);
    return v;
}
static uint64_t srng_get64(const unsigned char *region, unsigned off) {
    uint64_t v;
    memcpy(&v, region + off, sizeof v);
    return v;
}
static void srng_put32(unsigned char *region, unsigned off, uint32_t v) {
    memcpy(region + off, &v, sizeof v);
}
static void srng_put64(unsigned char *region, unsigned off, uint64_t v) {
    memcpy(region + off, &v, sizeof v);
}

static uint64_t srng_at_most(uint64_t x, uint64_t most) { return x < most ? x : most; }

static int srng_is_pow2(uint64_t x) { return x != 0 && (x & (x - 1)) == 0; }

static uint64_t srng_max_capacity(void) {
    const uint64_t size_max = SIZE_MAX; /* no cast: it is uint64_t already on LP64 */
    uint64_t limit = SRNG_CAST(uint64_t, 1) << 62;
    if (size_max - SHARED_RING_HEADER_SIZE < limit) {
        /* 32-bit size_t: the largest power of two that still fits with the header */
        limit = (size_max >> 1) + 1u;
        if (limit > size_max - SHARED_RING_HEADER_SIZE) limit >>= 1;
    }
    return limit;
}

static int srng_capacity_ok(uint64_t cap) {
    return srng_is_pow2(cap) && cap >= SRNG_MIN_CAPACITY && cap <= srng_max_capacity();
}

/* Fits an empty ring whatever the wrap point: record + padding <= capacity. */
static uint32_t srng_max_message_for(uint64_t cap) {
    uint64_t m = cap / 2u - SRNG_REC_HEADER;
    return m < SRNG_MAX_MESSAGE_LIMIT ? SRNG_CAST(uint32_t, m) : SRNG_MAX_MESSAGE_LIMIT;
}

/* ---- clock and CPU/OS waiting -------------------------------------------- */
#if defined(_WIN32)
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>
/* WaitOnAddress exists from Windows 8 (_WIN32_WINNT 0x0602) on. */
#if defined(_WIN32_WINNT) && _WIN32_WINNT >= 0x0602 && !defined(SHARED_RING_NO_OS_WAIT)
#define SRNG_HAVE_WAIT_ON_ADDRESS 1
#if defined(_MSC_VER)
#pragma comment(lib, "synchronization.lib")
#endif
#endif
#else
#include <time.h>
#if defined(__linux__) && !defined(SHARED_RING_NO_OS_WAIT)
#include <unistd.h>
#include <sys/syscall.h>
/* Strict -std=c11 hides syscall(); its signature is fixed by the ABI. */
#if !defined(__cplusplus) && !defined(_GNU_SOURCE) && !defined(_DEFAULT_SOURCE) && \
    !defined(_BSD_SOURCE)
extern long syscall(long number, ...);
#endif
#ifndef SRNG_SYSCALL
#define SRNG_SYSCALL syscall /* the OS-wait tests put a recorder here */
#endif
#endif
#endif
/* A monotonic clock needs POSIX; strict ISO C builds fall back to timespec_get. */
#if !defined(_WIN32) && \
    ((defined(_POSIX_C_SOURCE) && _POSIX_C_SOURCE >= 199309L) || defined(__APPLE__))
#define SRNG_HAVE_CLOCK_GETTIME 1
#endif

#ifndef SHARED_RING_NOW_NS
/* A failing clock must not stop time, or no timeout would end: each failed read adds 1 ms to a
   private count (a wait that saw the real clock first then ends at once: the difference wraps). */
static uint64_t srng_clock_failed(void) {
    static srng_au64 ticks;
    uint64_t t = SRNG_LOAD(&ticks, relaxed) + 1000000u;
    SRNG_STORE(&ticks, t, relaxed);
    return t;
}

static uint64_t srng_now_ns(void) {
#if defined(_WIN32)
    LARGE_INTEGER f, t;
    if (!QueryPerformanceFrequency(&f) || !QueryPerformanceCounter(&t) || f.QuadPart <= 0)
        return srng_clock_failed();
    return SRNG_CAST(uint64_t, SRNG_CAST(double, t.QuadPart) * 1e9 / SRNG_CAST(double, f.QuadPart));
#elif defined(SRNG_HAVE_CLOCK_GETTIME)
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) return srng_clock_failed();
    return SRNG_CAST(uint64_t, ts.tv_sec) * 1000000000u + SRNG_CAST(uint64_t, ts.tv_nsec);
#else
    struct timespec ts;
    if (timespec_get(&ts, TIME_UTC) == 0) return srng_clock_failed();
    return SRNG_CAST(uint64_t, ts.tv_sec) * 1000000000u + SRNG_CAST(uint64_t, ts.tv_nsec);
#endif
}
#define SHARED_RING_NOW_NS() srng_now_ns()
#endif

static void srng_cpu_relax(void) {
#if defined(_MSC_VER) && (defined(_M_X64) || defined(_M_IX86))
    YieldProcessor();
#elif (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
    __builtin_ia32_pause();
#elif (defined(__GNUC__) || defined(__clang__)) && (defined(__aarch64__) || defined(__arm__))
    __asm__ __volatile__("yield" ::: "memory");
#elif (defined(__GNUC__) || defined(__clang__)) && defined(__riscv)
    __asm__ __volatile__(".insn i 0x0F, 0, x0, x0, 0x010" ::: "memory"); /* pause */
#endif
}

/* How a side sleeps: the low byte of its wait_mode word; the bits above (SRNG_WAKES(kind)) say
   which wake-up calls it makes. A sleeper whose peer makes no call that reaches it (built with
   SHARED_RING_NO_OS_WAIT, wait hooks, or the reverse) sleeps in SRNG_SLICE_NS slices rather than
   trust a wake-up that never comes. */
#define SRNG_SLEEPS_NAPS 0u  /* never sleeps unbounded: needs no wake-up */
#define SRNG_SLEEPS_FUTEX 1u /* Linux futex */
#define SRNG_SLEEPS_ULOCK 2u /* Darwin __ulock_wait */
#define SRNG_SLEEPS_WAIT_ON_ADDRESS 3u
#define SRNG_SLEEPS_HOOK 4u /* the user's wait hook */
#define SRNG_WAKES(kind) (0x100u << (kind))
/* The word is also its side's state machine (docs/protocol.md, "The wait_mode word"): 0 NONE, no
   handle holds the side (formatted so, and a detach takes its own word back to it); else HELD, the
   holder's attach id (low 16 bits, so a detach's CAS never takes a successor's word) and its kind
   and wakes, stored by the holder at attach and adopt. A dead holder's stays until a successor's.
*/
#define SRNG_MODE_HELD 0x8000u
#define SRNG_SLICE_NS 1000000u /* bounded naps when no wake-up is promised */
#define SRNG_LIVENESS_NS 50000000u /* a dead peer, or a successor's attach, is seen within this */

/* Apple before Linux, so the macOS branch can be tested on Linux against a stub (make matrix). */
#if defined(SHARED_RING_NO_OS_WAIT)
#define SRNG_OS_SLEEP SRNG_SLEEPS_NAPS
#elif defined(__APPLE__)
#define SRNG_OS_SLEEP SRNG_SLEEPS_ULOCK
#elif defined(__linux__)
#define SRNG_OS_SLEEP SRNG_SLEEPS_FUTEX
#elif defined(SRNG_HAVE_WAIT_ON_ADDRESS)
#define SRNG_OS_SLEEP SRNG_SLEEPS_WAIT_ON_ADDRESS
#else
#define SRNG_OS_SLEEP SRNG_SLEEPS_NAPS
#endif

#if SRNG_OS_SLEEP != SRNG_SLEEPS_NAPS || (defined(_WIN32) && !defined(SHARED_RING_NO_OS_WAIT))
#include <errno.h>
#endif
#if !defined(SHARED_RING_NO_OS_WAIT) && !defined(_WIN32) && \
    (SRNG_OS_SLEEP != SRNG_SLEEPS_NAPS || defined(SRNG_HAVE_CLOCK_GETTIME))
#include <poll.h>
#define SRNG_HAVE_POLL 1
#endif

/* A nap of about `ns` (at least 1 ms where the OS counts in ms), e.g. when the OS wait failed. */
static void srng_nap(uint64_t ns) {
    SRNG_SCHED_POINT("nap");
#if defined(_WIN32) && !defined(SHARED_RING_NO_OS_WAIT)
    (void)ns;
    Sleep(1);
#elif defined(SRNG_HAVE_POLL)
    /* poll takes ms as an int: no timespec whose layout libc and the kernel could disagree on. */
    {
        uint64_t ms = ns / 1000000u + 1u;
        poll(SRNG_NULL, 0, ms > 1000u ? 1000 : SRNG_CAST(int, ms));
    }
#else
    (void)ns;
    srng_cpu_relax();
#endif
}

/* Time since `start` after a sleep of up to `slept_ns`, `before` counted before it. A clock that
   stands still (a frozen virtual clock) would keep timeouts from coming: if it shows no more than
   `before`, the sleep counts in full, so timed waits end, if inexactly. */
static uint64_t srng_elapsed_after(uint64_t start, uint64_t before, uint64_t slept_ns) {
    uint64_t now = SHARED_RING_NOW_NS() - start;
    if (now > before) return now;
    return slept_ns < UINT64_MAX - before ? before + slept_ns : UINT64_MAX;
}

/* One 1 ms retry-loop round: 0 once timeout_ns is up, else 1 after a nap (*elapsed updated). */
static int srng_nap_unless_timed_out(uint64_t start, uint64_t *elapsed, uint64_t timeout_ns) {
    if (timeout_ns != SHARED_RING_FOREVER && *elapsed >= timeout_ns) return 0;
    srng_nap(1000000u);
    *elapsed = srng_elapsed_after(start, *elapsed, 1000000u);
    return 1;
}

#if SRNG_OS_SLEEP == SRNG_SLEEPS_ULOCK
/* Darwin's compare-and-wait; the _SHARED variant works across processes. */
extern int __ulock_wait(uint32_t operation, void *addr, uint64_t value, uint32_t timeout_us);
extern int __ulock_wake(uint32_t operation, void *addr, uint64_t wake_value);
#define SRNG_UL_COMPARE_AND_WAIT_SHARED 3u
#define SRNG_ULF_WAKE_ALL 0x100u

static int srng_ulock_wait(srng_au32 *word, uint32_t expected, uint64_t timeout_ns) {
    uint64_t us = 0; /* 0: no timeout */
    if (timeout_ns != SHARED_RING_FOREVER) {
        /* Round up; clamp to 32 bits (71.6 min): 0 would mean forever; the caller sleeps again. */
        us = timeout_ns / 1000u + (timeout_ns % 1000u != 0);
        if (us == 0) us = 1;
        if (us > UINT32_MAX) us = UINT32_MAX;
    }
    if (__ulock_wait(SRNG_UL_COMPARE_AND_WAIT_SHARED, word, expected, SRNG_CAST(uint32_t, us)) >= 0)
        return 0;
    return errno == ETIMEDOUT || errno == EINTR ? 0 : -1;
}
#endif

#if SRNG_OS_SLEEP == SRNG_SLEEPS_FUTEX
/* The classic futex call takes the kernel's timespec (`long` fields, 64-bit on x32), never libc's:
   a 32-bit target built with -D_TIME_BITS=64 has a 64-bit time_t the kernel would misread. */
#if defined(__x86_64__) && defined(__ILP32__)
typedef long long srng_kernel_long;
#define SRNG_KERNEL_LONG_MAX LLONG_MAX
#else
typedef long srng_kernel_long;
#define SRNG_KERNEL_LONG_MAX LONG_MAX
#endif

/* Woken, timed out, interrupted or word changed: fine (the caller re-checks); else failed. */
static int srng_futex_result(long r) {
    if (r != -1) return 0;
    return errno == EAGAIN || errno == ETIMEDOUT || errno == EINTR ? 0 : -1;
}

static int srng_futex_wait(srng_au32 *word, uint32_t expected, uint64_t timeout_ns) {
    uint64_t sec = timeout_ns / 1000000000u;
    long nsec = SRNG_CAST(long, timeout_ns % 1000000000u);
    int forever = timeout_ns == SHARED_RING_FOREVER;
    struct {
        srng_kernel_long sec, nsec;
    } ts;
#ifdef SYS_futex_time64
    /* 32-bit: the time64 call (Linux 5.1+) first: two 64-bit fields whatever libc's time_t. */
    static srng_au32 no_time64;
    if (SRNG_LOAD(&no_time64, relaxed) == 0u) {
        struct {
            int64_t sec, nsec;
        } ts64;
        long r;
        ts64.sec = SRNG_CAST(int64_t, sec);
        ts64.nsec = nsec;
        r = SRNG_SYSCALL(SYS_futex_time64, SRNG_CAST(void *, word), 0, expected,
                         forever ? SRNG_NULL : &ts64, SRNG_NULL, 0);
        if (r != -1 || errno != ENOSYS) return srng_futex_result(r);
        SRNG_STORE(&no_time64, 1u, relaxed); /* an older kernel */
    }
#endif
    /* Clamped to the field (a 32-bit long holds 68 years): the caller's loop sleeps again. */
    ts.sec = sec > SRNG_CAST(uint64_t, SRNG_KERNEL_LONG_MAX) ? SRNG_KERNEL_LONG_MAX
                                                             : SRNG_CAST(srng_kernel_long, sec);
    ts.nsec = nsec;
    /* FUTEX_WAIT (0), not the private variant: the word may be shared between processes. */
    return srng_futex_result(SRNG_SYSCALL(SYS_futex, SRNG_CAST(void *, word), 0, expected,
                                          forever ? SRNG_NULL : &ts, SRNG_NULL, 0));
}
#endif

/* Sleep while *word == expected, at most timeout_ns (FOREVER: unbounded). Returns 0 when it ended
   normally (woken, timed out, interrupted, word changed), -1 when the OS refused the wait. */
static int srng_os_wait(srng_au32 *word, uint32_t expected, uint64_t timeout_ns) {
#if SRNG_OS_SLEEP == SRNG_SLEEPS_FUTEX
    return srng_futex_wait(word, expected, timeout_ns);
#elif SRNG_OS_SLEEP == SRNG_SLEEPS_ULOCK
    return srng_ulock_wait(word, expected, timeout_ns);
#elif defined(_WIN32) && !defined(SHARED_RING_NO_OS_WAIT)
    /* Windows sleeps in timer ticks (15.6 ms unless timeBeginPeriod): the caller spins out a wait
       under 1 ms rather than make zero-length system calls. WaitOnAddress hears only same-process
       wakes, so each sleep is bounded: a peer in another process is noticed within a tick. */
    if (timeout_ns < 1000000u) {
        srng_cpu_relax();
        return 0;
    }
#if defined(SRNG_HAVE_WAIT_ON_ADDRESS)
    if (!WaitOnAddress(word, &expected, sizeof expected, 1u) &&
        GetLastError() != ERROR_TIMEOUT)
        return -1;
#else
    (void)word;
    (void)expected;
    Sleep(1);
#endif
    return 0;
#elif defined(SRNG_HAVE_POLL)
    /* Portable POSIX fallback: a short nap; the caller re-checks. */
    (void)word;
    (void)expected;
    srng_nap(timeout_ns < SRNG_SLICE_NS ? timeout_ns : SRNG_SLICE_NS);
    return 0;
#else
    (void)word;
    (void)expected;
    (void)timeout_ns;
    srng_cpu_relax();
    return 0;
#endif
}

static void srng_os_wake(srng_au32 *word) {
#if SRNG_OS_SLEEP == SRNG_SLEEPS_FUTEX
    SRNG_SYSCALL(SYS_futex, SRNG_CAST(void *, word), 1, INT_MAX, SRNG_NULL, SRNG_NULL,
                 0); /* FUTEX_WAKE */
#elif SRNG_OS_SLEEP == SRNG_SLEEPS_ULOCK
    __ulock_wake(SRNG_UL_COMPARE_AND_WAIT_SHARED | SRNG_ULF_WAKE_ALL, word, 0);
#elif SRNG_OS_SLEEP == SRNG_SLEEPS_WAIT_ON_ADDRESS
    WakeByAddressAll(word);
#else
    (void)word;
#endif
}

/* This side's wait_mode word: how it sleeps and which wake-ups it makes. */
static uint32_t srng_wait_mode(const shared_ring_side *s) {
    uint32_t wakes = SRNG_OS_SLEEP != SRNG_SLEEPS_NAPS ? SRNG_WAKES(SRNG_OS_SLEEP) : 0u;
    if (s->realtime) return SRNG_SLEEPS_NAPS; /* and it makes no wake-up call */
    if (s->wake != SRNG_NULL) return SRNG_SLEEPS_HOOK | wakes | SRNG_WAKES(SRNG_SLEEPS_HOOK);
    if (s->poll_only) return SRNG_SLEEPS_NAPS | wakes;
    return SRNG_OS_SLEEP | wakes;
}

/* The word this handle's side holds while attached (SRNG_MODE_HELD). */
static uint32_t srng_held_mode(const shared_ring_side *s) {
    return SRNG_MODE_HELD | SRNG_CAST(uint32_t, s->attach_id & 0xFFFFu) << 16 | srng_wait_mode(s);
}

/* Sleep on `word` at most timeout_ns; in slices if `peer_mode` (the peer's wait_mode) makes no
   wake-up call that reaches how we sleep; at most SRNG_LIVENESS_NS if no handle holds the peer's
   side: its successor's attach wakes us if its calls reach us, and if not we find it so. */
static void srng_sleep(shared_ring_side *s, srng_au32 *word, uint32_t peer_mode,
                       uint64_t timeout_ns) {
    uint32_t kind = srng_wait_mode(s) & 0xFFu;
    uint64_t most = (peer_mode & SRNG_MODE_HELD) == 0u ? SRNG_LIVENESS_NS
                    : kind != SRNG_SLEEPS_NAPS && (peer_mode & SRNG_WAKES(kind)) == 0u
                        ? SRNG_SLICE_NS
                        : SHARED_RING_FOREVER;
    if (timeout_ns > most) timeout_ns = most;
    s->stats.sleeps++;
    if (s->wait != SRNG_NULL) {
        uint32_t open = s->open;
        srng_enter_callback(s);
        s->wait(s->hook_user, word, 1u, timeout_ns);
        srng_leave_callback(s, open);
    } else if (srng_os_wait(word, 1u, timeout_ns) != 0) {
        /* The OS refused the wait: nap rather than busy-retry a failing call, and count it. */
        s->stats.wait_failures++;
        srng_nap(timeout_ns < SRNG_SLICE_NS ? timeout_ns : SRNG_SLICE_NS);
    }
}

/* Doorbells: one sleep for wait_any on any number of rings (futex_waitv watches at most 128
   words). A consumer whose set's producers all run in its own process takes a doorbell here and
   writes its number beside each ring's sleeping word; a producer waking it there also bumps and
   wakes that bell. The number only indexes this table: a wrong one (a consumer in another process,
   a corrupted region) bumps some bell here, a spurious wake-up re-checked; nothing is stored
   outside the table. SHARED_RING_STATIC would give each file its own table, so none. */
#if SRNG_OS_SLEEP == SRNG_SLEEPS_FUTEX && !defined(SHARED_RING_STATIC)
#define SRNG_HAVE_BELLS 1
#define SRNG_BELLS 64u
static struct {
    srng_au32 taken; /* 1 while a wait_any holds it */
    srng_au32 rung;  /* bumped by every wake-up */
} srng_bells[SRNG_BELLS];

/* This library copy's table, as a number (its address: compared, never followed). A process may
   hold two copies (two libraries with the implementation): a consumer uses a doorbell only when
   every producer rings its own copy's table. */
static uint64_t srng_bell_table(void) { return SRNG_PUN(uintptr_t, &srng_bells[0]); }

/* The producer's part: ring the bell named beside the consumer's word. */
static void srng_ring_bell(srng_au32 *consumer_sleeping) {
    uint32_t bell = SRNG_LOAD(srng_beside(consumer_sleeping, SRNG_BELL_WORD), relaxed);
    if (bell == 0u || bell > SRNG_BELLS) return;
    /* release: the sleeper that sees the bump sees what we published */
    SRNG_ADD(&srng_bells[bell - 1u].rung, 1u, release);
    srng_os_wake(&srng_bells[bell - 1u].rung);
}
#else
static uint64_t srng_bell_table(void) { return 0u; } /* rings none */
#endif

/* Wake the peer sleeping on `word` its way (its wait_mode sits beside the word), if our wait_mode
   says a call of ours reaches it: our wake hook for a sleeper in a hook, the OS call for one in
   our OS primitive (a producer also rings the consumer's doorbell, if named). Other sleepers sleep
   in slices; a real-time side makes no call. stats.wakes counts the calls made. */
static void srng_wake(shared_ring_side *s, srng_au32 *word) {
    uint32_t sleeper = SRNG_LOAD(srng_beside(word, SRNG_MODE_WORD), relaxed) & 0xFFu;
    if (sleeper > SRNG_SLEEPS_HOOK || (srng_wait_mode(s) & SRNG_WAKES(sleeper)) == 0u) return;
    s->stats.wakes++;
    if (sleeper == SRNG_SLEEPS_HOOK) {
        uint32_t open = s->open;
        srng_enter_callback(s);
        s->wake(s->hook_user, word);
        srng_leave_callback(s, open);
    } else {
        srng_os_wake(word);
#ifdef SRNG_HAVE_BELLS
        if (s->magic == SRNG_PRODUCER_MAGIC) srng_ring_bell(word);
#endif
    }
}
/* ---- who holds a side, and whether it lives --------------------------------
   Each side's owner word is its state machine (docs/protocol.md, "The lifecycle"): 0 FREE, or the
   holder's pid (bits 0-28), LOCKED (bit 29: it holds its file lock, below), a state (bits 30-31:
   ATTACHED; CLAIMING, an attach in progress; FORMATTING, a prepare holds the side) and, in the
   high half, a number drawn once per process, so two processes' words differ even for equal pids
   (a reused pid, two pid namespaces). Only an ATTACHED word is a peer; the transient states are
   never taken for one, nor their end for a departure.

   Whether a holder lives is the kernel's to say, never a guess. Given the file the region maps
   (options.region_fd, or prepare's; Linux), a side holds an open-file-description lock on the
   file's byte at its block's offset, from before it takes the word until it gives it back; the
   kernel drops it when the description's last descriptor closes (detach, or death, whatever
   namespace, container or hidepid hides the process). Without a file a holder is judged by its
   pid where the kernel can say for certain, else counted alive (below). Looked at only on slow
   paths: attach, prepare, a wait about to sleep (then every SRNG_LIVENESS_NS). */
#if !defined(SHARED_RING_NO_OS_WAIT) && \
    ((defined(__APPLE__) && defined(__MACH__)) || defined(__linux__) || defined(_WIN32))
#define SRNG_HAVE_IDENTITY 1
#endif
#define SRNG_OWNER_PID 0x1FFFFFFFu /* also: a pid too large to record */
#define SRNG_OWNER_LOCKED 0x20000000u
#define SRNG_OWNER_STATE 0xC0000000u
#define SRNG_ATTACHED 0x00000000u
#define SRNG_CLAIMING 0x40000000u
#define SRNG_FORMATTING 0x80000000u /* 0xC0000000 is no state: read as CLAIMING */

/* A 64-bit finalizer (splitmix64's): spreads every input bit. */
static uint64_t srng_mix(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9u;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebu;
    return x ^ (x >> 31);
}

/* Do two owner words name one process (whatever their state)? */
static int srng_same_owner(uint64_t a, uint64_t b) {
    return ((a ^ b) & ~SRNG_CAST(uint64_t, SRNG_OWNER_STATE | SRNG_OWNER_LOCKED)) == 0u;
}

/* Is this owner word an attached side: not FREE, not transient? */
static int srng_is_attached(uint64_t owner) {
    return owner != 0u && (SRNG_CAST(uint32_t, owner) & SRNG_OWNER_STATE) == SRNG_ATTACHED;
}

/* The owner word with another state (and without the LOCKED bit). */
static uint64_t srng_in_state(uint64_t owner, uint32_t state) {
    return (owner & ~SRNG_CAST(uint64_t, SRNG_OWNER_STATE | SRNG_OWNER_LOCKED)) | state;
}

#ifdef SRNG_HAVE_IDENTITY
/* srng_pid_namespace: its inode (pids of two namespaces don't compare), 0 if unknown, 1 where
   there are none. srng_process_number: alike in every library copy of a process (SHARED_RING_STATIC
   copies share handles), different between processes: the kernel's random bytes for the program
   (Linux; a forked child inherits them, so the pid is mixed in), the creation time (Windows), 0. */
#ifdef _WIN32
static uint32_t srng_getpid(void) { return SRNG_CAST(uint32_t, GetCurrentProcessId()); }
static uint64_t srng_pid_namespace(void) { return 1; }
static uint64_t srng_process_number(void) {
    FILETIME created, exited, kernel, user;
    if (!GetProcessTimes(GetCurrentProcess(), &created, &exited, &kernel, &user)) return 0;
    return SRNG_CAST(uint64_t, created.dwHighDateTime) << 32 | created.dwLowDateTime;
}
#else
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
static uint32_t srng_getpid(void) { return SRNG_CAST(uint32_t, getpid()); }
#ifdef __linux__
#include <sys/auxv.h>
static uint64_t srng_pid_namespace(void) {
    struct stat st;
    return stat("/proc/self/ns/pid", &st) == 0 ? st.st_ino : 0u; /* ino_t may be 32-bit */
}
static uint64_t srng_process_number(void) {
    const void *bytes = SRNG_PUN(const void *, getauxval(AT_RANDOM)); /* an unsigned long */
    uint64_t x = 0;
    if (bytes != SRNG_NULL) memcpy(&x, bytes, sizeof x);
    return x;
}
#else
static uint64_t srng_pid_namespace(void) { return 1; }
static uint64_t srng_process_number(void) { return 0; }
#endif
#endif

/* Our owner word (ATTACHED, no LOCKED): the pid, and in the high half our number mixed with it. */
static uint64_t srng_my_word(void) {
    uint32_t pid = srng_getpid();
    uint64_t number;
    if (pid > SRNG_OWNER_PID) pid = SRNG_OWNER_PID;
    number = srng_mix(srng_process_number() ^ pid) & 0xFFFFFFFFu;
    return number << 32 | pid;
}
#endif

/* A 64-bit word of a side's block, read once. */
static uint64_t srng_id_field(const unsigned char *region, unsigned off) {
    return SRNG_LOAD(SRNG_PUN(const srng_au64 *, region + off), acquire);
}

/* ---- the kernel's locks (Linux) --------------------------------------------
   A judge tests a byte (F_OFD_GETLK) through a description of its own: one description's locks
   never conflict, and fork or a socket passes the same description; so each handle and each
   prepare opens the file anew via /proc/self/fd. A child forked after attach shares its parent's
   description: the lock lives while either does (until the child adopts the side or exits). */
#if defined(SRNG_HAVE_IDENTITY) && defined(__linux__)
#define SRNG_HAVE_KERNEL_LOCK 1
#ifdef O_CLOEXEC
#define SRNG_O_CLOEXEC O_CLOEXEC
#else
#define SRNG_O_CLOEXEC 0 /* strict ISO C builds of old libcs hide it */
#endif
#define SRNG_F_OFD_GETLK 36
#define SRNG_F_OFD_SETLK 37

/* struct flock64's head as every architecture we build for has it; `room` fits any longer tail. */
typedef struct srng_flock {
    short type, whence;
    int64_t start, len;
    int pid;
    char room[32];
} srng_flock;

/* F_OFD_SETLK/GETLK of `type` on one byte. Returns the type GETLK found (F_UNLCK: none in the
   way), SETLK's F_WRLCK, or -1 (errno EAGAIN or EACCES: another description holds the byte). */
static int srng_ofd_lock(int fd, int cmd, short type, unsigned byte) {
    srng_flock fl;
    long r;
    memset(&fl, 0, sizeof fl);
    fl.type = type;
    fl.whence = SEEK_SET;
    fl.start = byte;
    fl.len = 1;
#ifdef SYS_fcntl64 /* 32-bit: the call that takes struct flock64 */
    r = syscall(SYS_fcntl64, SRNG_CAST(long, fd), SRNG_CAST(long, cmd), &fl);
#else
    r = syscall(SYS_fcntl, SRNG_CAST(long, fd), SRNG_CAST(long, cmd), &fl);
#endif
    return r == 0 ? fl.type : -1;
}

/* Our own description of the region's file in *own; -1 if fd is 0 (none) or cannot be reopened (no
   /proc): no lock, no death judged. Returns OK, or ERR_ARG if fd is not an open regular file. */
static int srng_open_own(int fd, int *own) {
    char path[32] = "/proc/self/fd/", digits[12];
    struct stat st;
    size_t n = 0, at = 14;
    uint32_t v = SRNG_CAST(uint32_t, fd);
    *own = -1;
    if (fd <= 0) return SHARED_RING_OK;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        return srng_explain(SHARED_RING_ERR_ARG, "region_fd %u is not an open regular file",
                            SRNG_CAST(uint32_t, fd), 0, 0);
    do digits[n++] = SRNG_CAST(char, '0' + v % 10u);
    while ((v /= 10u) != 0);
    while (n > 0) path[at++] = digits[--n];
    path[at] = 0;
    /* Read-write for a write lock; an inspector may only read (it tests). Close-on-exec at open: a
       program a thread of ours execs meanwhile must not inherit the lock and keep us "alive". */
    *own = open(path, O_RDWR | O_NONBLOCK | O_NOCTTY | SRNG_O_CLOEXEC);
    if (*own < 0) *own = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | SRNG_O_CLOEXEC);
    if (*own >= 0 && SRNG_O_CLOEXEC == 0) (void)fcntl(*own, F_SETFD, FD_CLOEXEC);
    return SHARED_RING_OK;
}

/* Lock the side's byte through our description `own`: 1 taken, 0 another description holds it (a
   live holder), -1 the kernel refused otherwise (no lock to be had). */
static int srng_lock_byte(int own, unsigned id_off) {
    if (own < 0) return -1;
    SRNG_SCHED_POINT("lock");
    if (srng_ofd_lock(own, SRNG_F_OFD_SETLK, F_WRLCK, id_off) == F_WRLCK) return 1;
    return errno == EAGAIN || errno == EACCES ? 0 : -1;
}

/* Is the byte at id_off held by a description other than `own`? 1 held, 0 free, -1 can't tell. */
static int srng_byte_held(int own, unsigned id_off) {
    int type;
    SRNG_SCHED_POINT("test byte");
    type = own >= 0 ? srng_ofd_lock(own, SRNG_F_OFD_GETLK, F_WRLCK, id_off) : -1;
    SRNG_SCHED_POINT("byte tested");
    return type < 0 ? -1 : type != F_UNLCK;
}

/* Does the file (read via our description: no one else moves its offset) hold `value` at `off`,
   as the region does (an owner word, the ring id)? Else region_fd is not the file mapped from
   offset 0, and its locks say nothing of this ring. */
static int srng_file_shows(int own, unsigned off, uint64_t value) {
    uint64_t w = 0;
    return own >= 0 && lseek(own, SRNG_CAST(off_t, off), SEEK_SET) == SRNG_CAST(off_t, off) &&
           read(own, &w, sizeof w) == SRNG_CAST(long, sizeof w) && w == value;
}

static void srng_close_own(int own) {
    if (own >= 0) close(own);
}
#else /* no open-file-description locks: region_fd is not used, `own` is -1 (as without /proc) */
static int srng_open_own(int fd, int *own) {
    (void)fd;
    *own = -1;
    return SHARED_RING_OK;
}
static int srng_byte_held(int own, unsigned id_off) { (void)own, (void)id_off; return -1; }
#ifdef SRNG_HAVE_IDENTITY
static int srng_lock_byte(int own, unsigned id_off) { (void)own, (void)id_off; return -1; }
#endif
static int srng_file_shows(int own, unsigned off, uint64_t value) {
    (void)own, (void)off, (void)value;
    return 0;
}
static void srng_close_own(int own) { (void)own; }
#endif

/* The refusal when our description does not show what the region holds (srng_file_shows). */
static int srng_wrong_file(void) {
    return srng_refuse(SHARED_RING_ERR_ARG, "region_fd is not the file this ring is mapped from");
}

static srng_au64 *srng_owner_at(unsigned char *region, unsigned id_off) {
    return srng_u64_at(region, id_off + SRNG_ID_OWNER);
}

static uint64_t srng_owner_load(const unsigned char *region, unsigned id_off) {
    uint64_t w = SRNG_LOAD(SRNG_PUN(const srng_au64 *, region + id_off + SRNG_ID_OWNER), acquire);
    SRNG_SCHED_POINT("load owner");
    return w;
}

/* Move an owner word from `from` to `to`; 0 if it held something else. */
static int srng_owner_move(unsigned char *region, unsigned id_off, uint64_t from, uint64_t to) {
    int moved = SRNG_CAS(srng_owner_at(region, id_off), from, to);
    SRNG_SCHED_POINT("move owner");
    return moved;
}

#ifdef SRNG_HAVE_IDENTITY
/* The identity slot (pid namespace, and whose: the owner word without state), written only by the
   holder right after its move: written before, it could land over a rival's that moved first. */
static void srng_write_identity(unsigned char *region, unsigned id_off, uint64_t owner) {
    unsigned slot = id_off + SRNG_ID_SLOT;
    /* who 0 first, fenced: a reader (who, ns, who) never pairs an old who with our namespace */
    SRNG_STORE(srng_u64_at(region, slot + SRNG_SLOT_WHO), 0u, relaxed);
    SRNG_FENCE();
    SRNG_STORE(srng_u64_at(region, slot + SRNG_SLOT_NS), srng_pid_namespace(), relaxed);
    SRNG_STORE(srng_u64_at(region, slot + SRNG_SLOT_WHO), srng_in_state(owner, 0), release);
}

/* Does the slot place `owner`'s holder in our pid namespace? Not if it names another word (a
   former holder's, or none yet) before or after the namespace is read, nor if that is unknown.
   *here caches ours (0: not asked yet): a stat of /proc, asked only once a slot names the word. */
static int srng_placed_in(const unsigned char *region, unsigned id_off, uint64_t owner,
                          uint64_t *here) {
    unsigned slot = id_off + SRNG_ID_SLOT;
    uint64_t who = srng_in_state(owner, 0), ns;
    if (srng_id_field(region, slot + SRNG_SLOT_WHO) != who) return 0;
    ns = srng_id_field(region, slot + SRNG_SLOT_NS);
    if (srng_id_field(region, slot + SRNG_SLOT_WHO) != who || ns == 0u) return 0;
    if (*here == 0u) *here = srng_pid_namespace();
    return ns == *here;
}

static int srng_placed_here(const unsigned char *region, unsigned id_off, uint64_t owner) {
    uint64_t here = 0;
    return srng_placed_in(region, id_off, owner, &here);
}

/* Held by the process whose word is `mine`? Only if its word is that (pid and number) and its slot
   puts it in our namespace (a child of ours in a new namespace may share both). wait_any asks once
   per set (getpid, and the namespace at most once), not once per ring. */
static int srng_held_by(const unsigned char *region, unsigned id_off, uint64_t mine,
                        uint64_t *here) {
    uint64_t owner = srng_owner_load(region, id_off);
    return owner != 0u && srng_same_owner(owner, mine) &&
           srng_placed_in(region, id_off, owner, here);
}

static int srng_in_this_process(const unsigned char *region, unsigned id_off) {
    uint64_t here = 0;
    return srng_held_by(region, id_off, srng_my_word(), &here);
}

/* Was the last holder this process (the slot a release leaves names our word in our namespace)?
   Then a byte held over the FREE word is likely a description of ours (a lost handle taken back, a
   child's copy): not a claim to wait for. */
static int srng_last_held_here(const unsigned char *region, unsigned id_off) {
    return srng_placed_here(region, id_off, srng_my_word());
}

/* ---- the judge: is a holder gone? -----------------------------------------
   - its word says LOCKED and its byte is free (locked before the word, unlocked after), asked via
     our description `own`, which must show the same word at that offset (a region_fd of another
     file, or of a mapping not at offset 0, judges nothing). A claim judges only while it holds
     the byte itself (`have_byte`): then no live holder of a LOCKED word can exist. One whose
     lock failed takes the byte once it is free: a holder may leave and come back (the same
     word) between a look at a free byte and the claim's move.
   - its pid, placed in our pid namespace by its identity slot, names no process or one that
     ended (a pidfd is readable once it has, a zombie's too; Windows: its handle is signalled). A
     reused pid names a live process: a death missed, never one made up. This judges a holder
     without a file, or whose lock lives on in a forked child's description. macOS: never. */
#if defined(__linux__) && defined(SRNG_HAVE_POLL)
#define SRNG_HAVE_PIDFD 1
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434 /* one number on every architecture */
#endif
/* Has the process of this pidfd ended (it is readable once it has)? */
static int srng_exited(int pidfd) {
    struct pollfd pfd;
    pfd.fd = pidfd;
    pfd.events = POLLIN;
    pfd.revents = 0;
    return poll(&pfd, 1, 0) > 0;
}
static int srng_pid_ended(uint32_t pid) {
    int ended, fd = SRNG_CAST(int, syscall(SYS_pidfd_open, SRNG_CAST(int, pid), 0));
    if (fd < 0 && errno == ESRCH) return 1;
    if (fd < 0) /* before Linux 5.3: a zombie counts alive until reaped */
        return syscall(SYS_kill, SRNG_CAST(long, pid), 0L) != 0 && errno == ESRCH;
    ended = srng_exited(fd);
    close(fd);
    return ended;
}
#elif defined(_WIN32)
static int srng_pid_ended(uint32_t pid) {
    DWORD waited;
    HANDLE h = OpenProcess(SYNCHRONIZE, FALSE, pid);
    if (h == SRNG_NULL) return GetLastError() == ERROR_INVALID_PARAMETER;
    waited = WaitForSingleObject(h, 0); /* signalled once it ended: unlike an exit code, certain */
    CloseHandle(h);
    return waited == WAIT_OBJECT_0;
}
#else
static int srng_pid_ended(uint32_t pid) { (void)pid; return 0; } /* nothing certain to ask */
#endif

/* `have_byte`: 1 we hold the byte; 0 ask the kernel whether anyone does (a watcher); -1 judge by
   the pid only (a claim not holding the lock: a byte free a moment ago proves nothing to its
   move). */
static int srng_gone(const unsigned char *region, unsigned id_off, uint64_t owner, int own,
                     int have_byte) {
    uint32_t pid = SRNG_CAST(uint32_t, owner) & SRNG_OWNER_PID;
    if ((owner & SRNG_OWNER_LOCKED) != 0u && srng_file_shows(own, id_off, owner) &&
        (have_byte == 1 || (have_byte == 0 && srng_byte_held(own, id_off) == 0)))
        return 1;
    return pid != SRNG_OWNER_PID && srng_placed_here(region, id_off, owner) && srng_pid_ended(pid);
}

/* Do the owner words mean anything? Not in a region holding another layout (or garbage): prepare
   takes those words unjudged. Read after the word, never before: a word moved after a format shows
   that format's magic (an early look could see the old garbage, then a live attacher's word). A
   version of 0 under our magic is a format's memset in progress: its words are judged. */
static int srng_words_mean(const unsigned char *r) {
    uint32_t magic = SRNG_LOAD(SRNG_PUN(const srng_au32 *, r + SRNG_OFF_MAGIC), acquire);
    uint32_t version = srng_get32(r, SRNG_OFF_VERSION);
    return magic == 0u ||
           (magic == SHARED_RING_MAGIC && (version == SHARED_RING_LAYOUT_VERSION || version == 0u));
}

/* May `cur` be taken back by a handle of this process (take_back)? Any word of ours but a
   prepare's: a FORMATTING word is a format about to run, never a lost handle. */
static int srng_ours_to_take_back(uint64_t cur, uint64_t want) {
    return srng_same_owner(cur, want) &&
           (SRNG_CAST(uint32_t, cur) & SRNG_OWNER_STATE) != SRNG_FORMATTING;
}

/* Take the owner word at id_off for *want (our word, CLAIMING or FORMATTING; LOCKED added once our
   lock on its byte is taken, before the word): from FREE, unless another description holds the
   byte (a claim or prepare in progress: *live 0); from a holder gone for certain (judged via
   `own`); or, with take_back, from a word of this process. `judge` 1 always judges (attach); 0
   judges only words that mean something (prepare; srng_words_mean), or any word while another
   description held the byte (a claim or prepare of ours in progress, which may have taken its
   word before the format that gives the magic). Returns 1 taken; 0 with the word in the way in
   *live; ERR_ARG when region_fd is not this region's file. */
static int srng_take(unsigned char *region, unsigned id_off, uint64_t *want, int take_back,
                     int judge, int own, uint64_t *live) {
    int locked = srng_lock_byte(own, id_off);
    if (locked == 0) judge = 1;
    for (;;) {
        uint64_t cur;
        if (locked == 1) *want |= SRNG_OWNER_LOCKED; /* only a lock held says so */
        cur = srng_owner_load(region, id_off);
        if (cur == 0u && locked == 0 && !take_back && !srng_last_held_here(region, id_off)) {
            *live = 0u;
            return 0;
        }
        if (cur != 0 && (judge || srng_words_mean(region)) &&
            !(take_back && srng_ours_to_take_back(cur, *want))) {
            /* The byte let go since our lock failed: its holder may come back with the same word
               before our move. Take the byte first, then judge holding it. */
            if (locked == 0 && srng_byte_held(own, id_off) == 0 &&
                (locked = srng_lock_byte(own, id_off)) == 1)
                continue;
            if (!srng_gone(region, id_off, cur, own, locked == 1 ? 1 : -1)) {
                /* The judge read the file and the slot after `cur`: a rival that took the word
                   meanwhile rewrote both, so a dead holder looked alive. Judge the word there. */
                if (srng_owner_load(region, id_off) != cur) continue;
                *live = cur;
                return 0;
            }
        }
        if (srng_owner_move(region, id_off, cur, *want)) break;
    }
    srng_write_identity(region, id_off, *want); /* ours now */
    /* If our description does not show our word, region_fd is another file (or a copy): give the
       word back at once (a judge with the right file may find the byte free, no longer a lie). */
    if ((*want & SRNG_OWNER_LOCKED) != 0u && !srng_file_shows(own, id_off, *want)) {
        (void)srng_owner_move(region, id_off, *want, 0u);
        return srng_wrong_file();
    }
    return 1;
}

/* Why a side whose word is `live` cannot be taken by `mine`. */
static int srng_taken_refusal(uint64_t live, uint64_t mine) {
    if (live == 0u || (SRNG_CAST(uint32_t, live) & SRNG_OWNER_STATE) == SRNG_FORMATTING)
        return srng_refuse(SHARED_RING_NOT_FORMATTED,
                           "a prepare or a claim holds the side for a moment (retry, or "
                           "attach_*_wait)");
    return srng_explain(SHARED_RING_ERR_BUSY,
                        srng_same_owner(live, mine)
                            ? "another handle of this process holds the side "
                              "(SHARED_RING_TAKE_BACK takes it back)"
                            : "process %u holds the side (alive, or not known to be dead)",
                        live & SRNG_OWNER_PID, 0, 0);
}
#else /* who holds a side cannot be told: fence, and judge no one gone */
static int srng_in_this_process(const unsigned char *region, unsigned id_off) {
    (void)region, (void)id_off;
    return 0;
}
static int srng_gone(const unsigned char *region, unsigned id_off, uint64_t owner, int own,
                     int have_byte) {
    (void)region, (void)id_off, (void)owner, (void)own, (void)have_byte;
    return 0;
}
#endif

/* An attach's claim on the side at id_off: the lock, then the word (CLAIMING, LOCKED if the lock
   is ours; srng_take). Returns OK with the word in *owner (0 without identities), ERR_BUSY (a live
   process, this one included, holds the side or is attaching as it), NOT_FORMATTED (a prepare or
   a claim holds it for a moment: the _wait forms retry) or ERR_ARG (region_fd). */
static int srng_claim(unsigned char *region, unsigned id_off, uint32_t flags, int own,
                      uint64_t *owner) {
#ifdef SRNG_HAVE_IDENTITY
    uint64_t mine = srng_in_state(srng_my_word(), SRNG_CLAIMING), live = 0;
    int taken = srng_take(region, id_off, &mine, (flags & SHARED_RING_TAKE_BACK) != 0u, 1, own,
                          &live);
    if (taken <= 0) return taken < 0 ? taken : srng_taken_refusal(live, mine);
    *owner = mine;
#else
    (void)region, (void)id_off, (void)flags, (void)own;
    *owner = 0;
#endif
    return SHARED_RING_OK;
}

/* The end of an attach: CLAIMING -> ATTACHED (LOCKED kept); release: a peer seeing the word sees
   the identity slot. ERR_BUSY if the word was taken from under us (only a hostile peer). */
static int srng_attached(shared_ring_side *s, unsigned id_off) {
    uint64_t attached;
    if (s->owner == 0) return SHARED_RING_OK; /* no identities here */
    attached = srng_in_state(s->owner, SRNG_ATTACHED) | (s->owner & SRNG_OWNER_LOCKED);
    if (!srng_owner_move(s->region, id_off, s->owner, attached))
        return srng_refuse(SHARED_RING_ERR_BUSY, "the side was taken while this attach ran");
    s->owner = attached;
    return SHARED_RING_OK;
}

/* Give the side back: the word first (to FREE, if still ours), then the lock (a judge finding the
   byte free and the word still ours judges us gone, as we are about to be). */
static void srng_release_side(shared_ring_side *s, unsigned char *region, unsigned id_off) {
    if (s->owner != 0) (void)srng_owner_move(region, id_off, s->owner, 0u);
    s->owner = 0;
    srng_close_own(s->lock_fd);
    s->lock_fd = -1;
}

/* The handle's own sleeping word (its wait_mode word follows it), and its peer's. */
static unsigned srng_own_sleeping(const shared_ring_side *s) {
    return s->magic == SRNG_PRODUCER_MAGIC ? SRNG_OFF_PRODUCER_SLEEPING
                                           : SRNG_OFF_CONSUMER_SLEEPING;
}
static unsigned srng_peer_sleeping(const shared_ring_side *s) {
    return s->magic == SRNG_PRODUCER_MAGIC ? SRNG_OFF_CONSUMER_SLEEPING
                                           : SRNG_OFF_PRODUCER_SLEEPING;
}

/* The identity block of the handle's side, and its peer's. */
static unsigned srng_own_id(const shared_ring_side *s) {
    return s->magic == SRNG_PRODUCER_MAGIC ? SRNG_OFF_PRODUCER_ID : SRNG_OFF_CONSUMER_ID;
}
static unsigned srng_peer_id(const shared_ring_side *s) {
    return s->magic == SRNG_PRODUCER_MAGIC ? SRNG_OFF_CONSUMER_ID : SRNG_OFF_PRODUCER_ID;
}

/* Is the side no longer ours (a child adopted it, another handle took it back, or the region was
   formatted anew: attach ids start again, so a new handle may hold our id)? The attach id too: a
   handle of this process that took the side back without a lock holds the same word. */
static int srng_side_lost(const shared_ring_side *s) {
    unsigned own_id = srng_own_id(s);
    if (srng_id_field(s->region, SRNG_OFF_RING_ID) != s->ring_id) return 1; /* formatted anew */
    return s->owner != 0u && (srng_owner_load(s->region, own_id) != s->owner ||
                              srng_id_field(s->region, own_id + SRNG_ID_ATTACH) != s->attach_id);
}

/* A handle used by a process other than its attacher (a child forked after attach) may not detach
   (freeing a side the attacher still uses), close or wait until it adopted the handle: ERR_HANDLE.
   Checked only where a system call is cheap next to the call: the hot path cannot afford getpid. */
static int srng_foreign(const shared_ring_side *s) {
    if (s->owner == 0) return SHARED_RING_OK; /* always, without identities */
#ifdef SRNG_HAVE_IDENTITY
    if (!srng_same_owner(s->owner, srng_my_word()))
        return srng_explain(SHARED_RING_ERR_HANDLE,
                            "process %u attached this handle; a forked child adopts it "
                            "(shared_ring_adopt_*) or attaches its own",
                            s->owner & SRNG_OWNER_PID, 0, 0);
#endif
    return srng_side_lost(s) ? srng_refuse(SHARED_RING_ERR_HANDLE,
                                           "the side is no longer this handle's (a child "
                                           "adopted it, or it was taken back)")
                             : SHARED_RING_OK;
}

/* Is the peer's word `owner` news? ATTACHED, not the known peer: a new peer. No longer naming the
   known peer (FREE, or taken by a claim or prepare, only once it left): its departure. Transient,
   of no known peer (an attach or prepare, running or failed): no news. */
static int srng_peer_news(const shared_ring_side *s, uint64_t owner) {
    if (srng_is_attached(owner)) return owner != s->peer_owner;
    return s->peer_owner != 0u && !srng_same_owner(owner, s->peer_owner);
}

/* Take the news in: a new peer (judged at once: check_at = now) or the known one's departure. */
static void srng_note_peer(shared_ring_side *s, uint64_t owner, uint64_t now) {
    if (!srng_peer_news(s, owner)) return;
    if (srng_is_attached(owner)) {
        s->peer_owner = owner;
        s->peer_gone = 0;
        s->gone_told = 0;
        s->check_at = now;
        return;
    }
    if (!s->peer_gone) s->gone_told = 0; /* a death already told is not news */
    s->peer_gone = 1;
    s->peer_owner = 0;
}

/* The same news from the peer's attach id and wait_mode word, which every build writes (a peer
   without identities has no owner word), and which tell what the owner word cannot: a peer that
   attached after our last look and left before this one (its id new, its word NONE). The id is
   loaded first (acquire): its holder stored HELD before it, so a NONE loaded after it is that
   holder's detach or a later one's. While a claim runs the id is the one it replaces (with
   SRNG_ID_CLAIMING): that holder's departure is still told, and no peer is made up. 0: no news;
   SRNG_ARRIVED: a peer not taken in yet holds the side; SRNG_LEFT: the peer taken in, or one never
   seen, left. */
enum { SRNG_ARRIVED = 1, SRNG_LEFT = 2 };
static int srng_side_news(const shared_ring_side *s, unsigned peer, uint64_t *id,
                          uint32_t *held) {
    unsigned mode_off = peer == SRNG_OFF_PRODUCER_ID ? SRNG_OFF_PRODUCER_WAIT_MODE
                                                     : SRNG_OFF_CONSUMER_WAIT_MODE;
    *id = SRNG_LOAD(srng_u64_at(s->region, peer + SRNG_ID_ATTACH), acquire) & ~SRNG_ID_CLAIMING;
    *held = (SRNG_LOAD(srng_u32_at(s->region, mode_off), acquire) & SRNG_MODE_HELD) != 0u;
    if (*held) return *id != s->peer_attach || !s->peer_held ? SRNG_ARRIVED : 0;
    return *id != s->peer_attach || s->peer_held ? SRNG_LEFT : 0; /* else: taken in already */
}

/* Take it in. A departure of a peer never seen is news; one the owner word told is not again. */
static void srng_note_side(shared_ring_side *s, uint64_t now) {
    uint64_t id;
    uint32_t held;
    int news = srng_side_news(s, srng_peer_id(s), &id, &held);
    int unseen = id != s->peer_attach;
    s->peer_attach = id;
    s->peer_held = held;
    if (news == SRNG_ARRIVED) {
        s->peer_gone = 0;
        s->gone_told = 0;
        s->check_at = now;
    } else if (news == SRNG_LEFT) {
        if (unseen || !s->peer_gone) s->gone_told = 0;
        s->peer_gone = 1;
    }
}

/* ---- the peer's death as a descriptor (event loops) ---------------------- */
#if defined(SRNG_HAVE_PIDFD) && defined(SRNG_HAVE_IDENTITY)
#define SRNG_HAVE_PEER_FD 1

/* Has peer_fd's process ended? Only while the peer's word is the one it was opened for. */
static int srng_peer_exited(const shared_ring_side *s) {
    if (s->peer_fd < 0 || s->realtime || /* polls no descriptor */
        srng_owner_load(s->region, srng_peer_id(s)) != s->peer_fd_owner)
        return 0;
    return srng_exited(s->peer_fd);
}

static void srng_drop_peer_fd(shared_ring_side *s) {
    if (s->peer_fd >= 0) close(s->peer_fd);
    s->peer_fd = -1;
}

/* Open a pidfd for the peer's word `owner`, whose pid must be of our namespace. A pid is not
   reused while its process lives, so the fd names the peer if the kernel's lock, checked after the
   open, says it lives; a peer with no lock is taken as the pid's process (had it died already, the
   pid's new process is watched instead: a death missed, never one made up). */
static int srng_open_peer_fd(shared_ring_side *s, unsigned peer, uint64_t owner) {
    uint32_t pid = SRNG_CAST(uint32_t, owner) & SRNG_OWNER_PID;
    int fd;
    if (!srng_placed_here(s->region, peer, owner))
        return srng_refuse(SHARED_RING_ERR_STATE,
                           "the peer's process cannot be placed from here (another pid "
                           "namespace, no /proc, or it is still attaching)");
    fd = SRNG_CAST(int, syscall(SYS_pidfd_open, SRNG_CAST(int, pid), 0));
    if (fd < 0 && errno != ESRCH)
        return srng_refuse(SHARED_RING_ERR_SYSTEM,
                           "pidfd_open failed (Linux before 5.3, or out of descriptors): watch "
                           "with a timer");
    if (fd < 0 || srng_exited(fd) || srng_gone(s->region, peer, owner, s->lock_fd, 0)) {
        if (fd >= 0) close(fd);
        s->peer_gone = 1;
        return srng_refuse(SHARED_RING_PEER_GONE, srng_gone_text);
    }
    srng_drop_peer_fd(s);
    s->peer_fd = fd;
    s->peer_fd_owner = owner;
    return fd;
}
#else
static int srng_peer_exited(const shared_ring_side *s) { (void)s; return 0; }
static void srng_drop_peer_fd(shared_ring_side *s) { (void)s; }
#endif

/* shared_ring_*_peer_fd past the gate: the held fd while its process holds the peer's side and no
   call said PEER_GONE; else it has served and is closed here (only here and at detach, never
   behind a call that returned it), once a new one for the current peer, if any, replaced it. */
static int srng_peer_fd(shared_ring_side *s) {
#ifdef SRNG_HAVE_PEER_FD
    unsigned peer = srng_peer_id(s);
    uint64_t owner = srng_owner_load(s->region, peer);
    int r;
    if (s->peer_fd >= 0 && owner == s->peer_fd_owner && !s->gone_told) return s->peer_fd;
    if (owner == 0 || (SRNG_CAST(uint32_t, owner) & SRNG_OWNER_STATE) != SRNG_ATTACHED)
        r = srng_refuse(SHARED_RING_ERR_STATE, "no peer is attached: ask again once one is");
    else if (((owner ^ s->owner) & SRNG_OWNER_PID) == 0u)
        r = srng_refuse(SHARED_RING_ERR_STATE,
                        "the peer is in this process: its detach wakes this side (a thread "
                        "that exits attached is no death: close in a thread-exit destructor)");
    else
        r = srng_open_peer_fd(s, peer, owner); /* replaces the old one if it opens */
    if (r < 0) srng_drop_peer_fd(s);
    return r;
#else
    (void)s;
    return srng_refuse(SHARED_RING_ERR_SYSTEM,
                       "no process descriptors on this platform: watch with a timer");
#endif
}

/* Still the ring this handle attached to? A format under a live handle gives a new ring id (and
   may leave old records at the handle's position): ERR_CORRUPT for good. Asked by every wait
   before it reads a record and before every sleep; never per message. */
static int srng_same_ring(shared_ring_side *s) {
    if (srng_ring_id_holds(s)) return SHARED_RING_OK;
    s->broken = 1;
    s->open = 0;
    return srng_refuse(SHARED_RING_ERR_CORRUPT,
                       "the region was formatted anew under this handle (its ring id changed)");
}

/* Has the peer left: detached or taken over (its owner word says so) or, in another process, died?
   Slow paths only: a word change counts at once; another process is judged at most every
   SRNG_LIVENESS_NS. Sets s->peer_gone (clears gone_told for a new peer). Returns 1 when the peer
   is in another process and the kernel can tell its death (a sleep must then end by s->check_at to
   look again); 0 when there is no peer, it is in this process or its death cannot be told;
   ERR_CORRUPT if the region was formatted anew under this handle. */
static int srng_watch_peer(shared_ring_side *s, uint64_t now) {
    unsigned peer = srng_peer_id(s);
    uint64_t owner;
    int r = srng_same_ring(s);
    if (r != SHARED_RING_OK) return r;
    owner = srng_owner_load(s->region, peer);
    srng_note_peer(s, owner, now);
    srng_note_side(s, now);
    owner = s->peer_owner;
    /* our own word (pid and number): a peer in this process, whose death would be ours */
    if (s->owner == 0 || owner == 0 || srng_same_owner(owner, s->owner)) return 0;
    if (srng_peer_exited(s)) { /* the kernel says so: no need to wait for the next look */
        s->peer_gone = 1;
        return 1;
    }
    if (now - s->check_at < (SRNG_CAST(uint64_t, 1) << 63)) { /* now >= check_at */
        /* never back to 0: a departure the side's words told stays told */
        if (srng_gone(s->region, peer, owner, s->lock_fd, 0)) s->peer_gone = 1;
        s->check_at = now + SRNG_LIVENESS_NS;
    }
    return 1;
}

/* What a non-waiting call learns of its peer: its words' news (three loads: a detach, or a new
   peer judged at the next wait) and, if a peer fd fired, its death (others only a wait sees). A
   real-time side polls no fd: loads only, no system call, no clock. Returns 1 if the peer left. */
static int srng_peer_left(shared_ring_side *s) {
    uint64_t owner = srng_owner_load(s->region, srng_peer_id(s));
    if (srng_peer_exited(s)) {
        (void)srng_watch_peer(s, SHARED_RING_NOW_NS());
    } else {
        srng_note_peer(s, owner, 0u);
        srng_note_side(s, 0u);
    }
    return s->peer_gone != 0;
}

/* ---- barriers: who fences ---------------------------------------------------
   A side that publishes a position must then look whether the peer sleeps: "store, then load"
   needs a full fence, or both sides can miss each other and the sleeper never wakes. On x86 that
   fence waits for every store of the message just written (what it costs: section 4, "Asymmetric
   barriers"). Between threads of one process the fence moves to the rare side about to sleep: on Linux,
   membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) makes every CPU running a thread of this process
   execute a full barrier, so the sleeper issues it before its last re-check and the publisher
   fences only the compiler.

   Nothing reaches another process for certain. GLOBAL_EXPEDITED, the one kind that would, picks
   its CPUs from a per-CPU copy of each process's registration, refreshed only when a CPU switches
   address spaces: a CPU that ran the process before it registered, went idle and came back to it
   is skipped for good, and a publish still in its store buffer is missed (docs/protocol.md).
   PRIVATE_EXPEDITED picks its CPUs from what each one runs at the time of the call.

   So a side publishes without a fence only to a peer the kernel places in its own process (same
   pid in the same pid namespace), or to one whose wait_mode says it only naps (POLL_ONLY, or a
   build without OS waits: it needs no wake-up, so a too-early look at its word loses nothing), and
   says so by writing that peer's attach id in its fenceless_for word; to any other peer, or none,
   it fences. A sleeper trusts fenceless_for only when it holds its own attach id; another non-zero
   value (written for a peer that has left) makes it sleep in SRNG_SLICE_NS slices until the
   publisher chooses again, which it does whenever it finds the sleeper's word non-zero: a sleep,
   or the 2 (SRNG_LOOK_AT_ME) an attach leaves there. */

#define SRNG_LOOK_AT_ME 2u

static int srng_register_process_barrier(void) {
#if defined(__linux__) && !defined(SHARED_RING_NO_OS_WAIT) && defined(SYS_membarrier) && \
    !defined(SHARED_RING_NO_MEMBARRIER)
    /* MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED (1 << 4): per process, idempotent */
    return syscall(SYS_membarrier, 1 << 4, 0, 0) == 0;
#else
    return 0;
#endif
}

/* Make every CPU running a thread of this process execute a full barrier. 1 on success. */
static int srng_process_barrier(void) {
#if defined(__linux__) && !defined(SHARED_RING_NO_OS_WAIT) && defined(SYS_membarrier)
    return SRNG_SYSCALL(SYS_membarrier, 1 << 3, 0, 0) == 0; /* PRIVATE_EXPEDITED */
#else
    return 0;
#endif
}

/* The fenceless_for word of the side whose sleeping word is `sleeping`. */
static srng_au64 *srng_fenceless_for(srng_au32 *sleeping) {
    return SRNG_PUN(srng_au64 *, srng_beside(sleeping, SRNG_FENCELESS_FOR_WORD));
}

static void srng_end_direct(shared_ring_producer *p);
static void srng_update_direct(shared_ring_producer *p);

/* Choose how we publish to the peer attached now, and say so in our fenceless_for word. Cold:
   at attach, before each sleep, and whenever we find the peer's word non-zero. */
static void srng_choose_barrier(shared_ring_side *s) {
    int producer = s->magic == SRNG_PRODUCER_MAGIC;
    unsigned peer_id = srng_peer_id(s);
    srng_au32 *own = srng_u32_at(s->region, srng_own_sleeping(s));
    srng_au32 *peer_mode = srng_beside(srng_u32_at(s->region, srng_peer_sleeping(s)), SRNG_MODE_WORD);
    /* acquire: the peer stored its pid, namespace and wait mode before its id */
    uint64_t peer = SRNG_LOAD(srng_u64_at(s->region, peer_id + SRNG_ID_ATTACH), acquire);
    uint64_t fenceless_for;
    int naps;
    if (peer == s->barrier_peer) return;
    s->barrier_peer = peer;
    /* No fence for a peer that only naps (it needs no wake-up) or one the kernel places in this
       process (its membarrier fences). A real-time side wakes nobody, so its peer trusts none of
       its wake-ups (it sleeps in slices): no fence, and no look at who the peer is (a syscall). */
    naps = (SRNG_LOAD(peer_mode, relaxed) & (SRNG_MODE_HELD | 0xFFu)) ==
           (SRNG_MODE_HELD | SRNG_SLEEPS_NAPS);
    fenceless_for = peer != 0u && (peer & SRNG_ID_CLAIMING) == 0u && (naps || s->realtime ||
                                   (s->process_barrier && srng_in_this_process(s->region, peer_id)))
                        ? peer
                        : 0u;
    /* release: a sleeper that reads 0 also sees every fenceless publish before it. The fence: a
       sleeper that missed our new value has announced itself where our next loads see it. */
    SRNG_STORE(srng_fenceless_for(own), fenceless_for, release);
    SRNG_FENCE();
    if (producer) srng_end_direct(SRNG_PUN(shared_ring_producer *, s));
    s->fenceless = fenceless_for != 0u;
    if (producer) srng_update_direct(SRNG_PUN(shared_ring_producer *, s));
}

/* The peer's word was non-zero: take it; choose our barrier again (a new peer may have attached);
   wake the peer if it sleeps. Whoever swaps the 1 out makes the one wake-up call. Out of line but
   not cold: gcc's cold attribute cost its caller's loop 3 instructions a message. */
SRNG_NOINLINE void srng_answer_peer(shared_ring_side *s, srng_au32 *word) {
    /* acquire: the 2 of an attach was stored after its attach id */
    uint32_t was = SRNG_XCHG(word, 0u, acquire);
    if (was == 0u) return;
    srng_choose_barrier(s);
    if (was != SRNG_LOOK_AT_ME) srng_wake(s, word);
}

SHARED_RING_API void srng_answer(shared_ring_side *s, void *word) {
    srng_answer_peer(s, SRNG_CAST(srng_au32 *, word));
}

static int srng_deliver(shared_ring_consumer *c, shared_ring_read_fn fn, void *user, uint64_t most);

/* After publishing a position: if the peer announced that it sleeps, wake it. */
SRNG_INLINE void srng_wake_if_sleeping(shared_ring_side *s, srng_au32 *word) {
    srng_publish_barrier(s);
    srng_wake_sleeper(s, word);
}

/* A wait condition: returns 1 when the caller may proceed, 0 to keep waiting, or a negative result
   to stop with. `thorough` 0: the cheapest look (while spinning: touch no line the peer writes
   often); 1: every check (at start, every SRNG_SPIN_CLOCK_ROUNDS rounds, around each sleep). */
typedef int (*srng_ready_fn)(void *ctx, int thorough);

/* Pause rounds between two looks at the clock while spinning: the clock costs tens of ns, a pause
   a few ns to over 100 depending on the CPU, so the budget is kept within a few us either way. */
#define SRNG_SPIN_CLOCK_ROUNDS 32u
#define SRNG_ROUND_NS_MAX 100000u /* a round estimate; bounds a clock's jump */
#define SRNG_SPIN_STILL_MAX 1024u /* looks at a clock that stands still */

/* Spin with the pause hint until ready() says something or `budget_ns` (from `start`) is spent.
   Returns ready()'s answer, 0 if none, and in *spun how long it spun. When ready() says yes the
   clock is not read again (that would delay every wake-up found by spinning, by ~30 ns): the
   rounds since the last reading count at *round_ns each, a round's cost as last measured. */
static int srng_spin(srng_ready_fn ready, void *ctx, uint64_t start, uint64_t budget_ns,
                     uint32_t *round_ns, uint64_t *spun) {
    uint64_t last = start;
    uint32_t i, still = 0;
    int r;
    for (i = 1;; i++) {
        int look = i % SRNG_SPIN_CLOCK_ROUNDS == 0;
        srng_cpu_relax();
        r = ready(ctx, look);
        if (r != 0) break;
        if (look) {
            uint64_t now = SHARED_RING_NOW_NS(), round = (now - last) / SRNG_SPIN_CLOCK_ROUNDS;
            if (now == last) {
                /* a clock that stands still ends the spin after a while */
                if (++still == SRNG_SPIN_STILL_MAX) break;
                continue;
            }
            still = 0;
            *round_ns = round < SRNG_ROUND_NS_MAX ? SRNG_CAST(uint32_t, round) : SRNG_ROUND_NS_MAX;
            last = now;
            if (now - start >= budget_ns) break;
        }
    }
    *spun = last - start + SRNG_CAST(uint64_t, i % SRNG_SPIN_CLOCK_ROUNDS) * *round_ns;
    return r;
}

/* Has the peer (whose sleeping word is `peer`) yet to choose its barrier for us? Another non-zero
   id in its fenceless_for was chosen for a side attached before us (a replaced or adopted one) and
   promises us nothing until the peer sees our word non-zero and chooses again. */
static int srng_unanswered(const shared_ring_side *s, srng_au32 *peer) {
    uint64_t fenceless_for = SRNG_LOAD(srng_fenceless_for(peer), acquire);
    return fenceless_for != 0u && fenceless_for != s->attach_id;
}

/* What a sleeper's announcement (made, and fenced) needs to be certain that the peer's next look
   sees it, by the peer's fenceless_for and wait_mode. SRNG_PROMISED: nothing (fenceless_for 0: it
   fences; or no handle holds its side, whatever its fenceless_for says: a successor's attach
   chooses and fences before it looks at our word). SRNG_PROMISED_BY_BARRIER: our membarrier (our
   attach id: it publishes to us without a fence). SRNG_UNPROMISED: we only nap (POLL_ONLY);
   another id (it chose for a side before us: srng_unanswered); or no wake-up call of its reaches
   us anyway (real-time, say: not worth interrupting its CPUs). */
enum { SRNG_UNPROMISED, SRNG_PROMISED, SRNG_PROMISED_BY_BARRIER };
static int srng_promise(const shared_ring_side *s, srng_au32 *peer) {
    uint64_t fenceless_for = SRNG_LOAD(srng_fenceless_for(peer), acquire);
    uint32_t mode;
    if (s->poll_only) return SRNG_UNPROMISED; /* nobody promises a napper anything */
    if (fenceless_for == 0u) return SRNG_PROMISED;
    /* acquire: a peer that left published everything before its NONE; whatever it chose, its
       successor's attach chooses anew before it looks at our word */
    mode = SRNG_LOAD(srng_beside(peer, SRNG_MODE_WORD), acquire);
    if ((mode & SRNG_MODE_HELD) == 0u) return SRNG_PROMISED;
    if (fenceless_for != s->attach_id) return SRNG_UNPROMISED;
    return (mode & SRNG_WAKES(srng_wait_mode(s) & 0xFFu)) != 0u ? SRNG_PROMISED_BY_BARRIER
                                                               : SRNG_UNPROMISED;
}

/* Announce in `word` that we are about to sleep, ordered before our next look at the peer's
   position: a full fence for our side, membarrier for a peer that publishes to us without one
   (`peer` is its sleeping word). Returns 1 when a wake-up is promised; 0 when not: we only nap
   (POLL_ONLY), the peer has yet to choose for us (srng_unanswered), or the membarrier failed. */
static int srng_announce_sleep(const shared_ring_side *s, srng_au32 *word, srng_au32 *peer) {
    /* release: a peer that sees the 1 also sees what we stored before (the producer's wake pos) */
    SRNG_STORE(word, 1u, release);
    SRNG_FENCE(); /* the announcement before our next look at the peer's position */
    switch (srng_promise(s, peer)) {
    case SRNG_PROMISED: return 1;
    case SRNG_PROMISED_BY_BARRIER: return srng_process_barrier();
    default: return 0;
    }
}

/* The end of a sleep or an arm: our word back to 0, or to SRNG_LOOK_AT_ME while the peer has yet
   to choose for us, so that its next publish or release still finds the word non-zero and chooses
   (an idle peer would otherwise keep a choice made for someone else for good). */
static void srng_withdraw(const shared_ring_side *s, srng_au32 *word, srng_au32 *peer) {
    SRNG_STORE(word, srng_unanswered(s, peer) ? SRNG_LOOK_AT_ME : 0u, relaxed);
}

/* Adaptive spinning, after a wait that slept. If a spin twice as long would have found what it
   waited for, the next wait spins twice as long (up to spin_max): the peer or the machine pauses
   now and then a little longer than the spin. Any other sleep (longer, a timeout, the end of the
   stream) halves it (down to spin_ns), so an idle side, or a sparse stream with steady gaps, goes
   on sleeping after spin_ns. Waits that spinning ends keep what was learned. */
static void srng_adapt_spin(shared_ring_side *s, int found, uint64_t waited_ns) {
    uint64_t now = s->spin_now;
    uint64_t next = found == 1 && waited_ns <= 2u * now ? 2u * now : now / 2u;
    if (next > s->spin_max) next = s->spin_max;
    s->spin_now = SRNG_CAST(uint32_t, next > s->spin_ns ? next : s->spin_ns);
}

/* A wait that found nothing: TIMEOUT, or PEER_GONE when the peer is gone (and no new one came). */
static int srng_timed_out(int peer_gone) {
    return peer_gone ? srng_refuse(SHARED_RING_PEER_GONE, srng_gone_text)
                     : srng_refuse(SHARED_RING_TIMEOUT, "the timeout passed first (no room, or no message)");
}

/* PEER_GONE, said once (gone_told): later waits wait for a new peer (its attach wakes them) up to
   their timeout, then say PEER_GONE again; the peer's descriptor has served (the next
   shared_ring_*_peer_fd closes it). */
static int srng_tell_gone(shared_ring_side *s) {
    s->gone_told = 1;
    return srng_refuse(SHARED_RING_PEER_GONE, srng_gone_text);
}

/* The one waiting loop both sides use: spin for spin_ns with the pause hint (time, not a count:
   a pause costs 10x more on some CPUs), then announce in `word` and sleep. The announce / barrier
   / re-check order pairs with srng_wake_if_sleeping() on the other side (Dekker's pattern: either
   we see its new position or it sees our announcement), so no wake-up is lost. `word` is our
   sleeping word, `peer` the peer's (its wait_mode and fenceless_for words follow it). */
static int srng_block(shared_ring_side *s, srng_au32 *word, srng_au32 *peer, srng_ready_fn ready,
                      void *ctx, uint64_t timeout_ns) {
    srng_au32 *peer_mode = srng_beside(peer, SRNG_MODE_WORD);
    unsigned peer_id = srng_peer_id(s);
    uint64_t start, elapsed = 0, slept_at, seen_id;
    uint32_t seen_held;
    int capped;
    /* A cheap look first: the caller often finds what it waits for. */
    int r = ready(ctx, 0);
    if (r != 0) return r;
    if (timeout_ns == 0) {
        r = ready(ctx, 1);
        return r != 0 ? r : srng_timed_out(0);
    }
    s->stats.waits++;
    start = SHARED_RING_NOW_NS();
    if (s->spin_now != 0) {
        r = srng_spin(ready, ctx, start, s->spin_now < timeout_ns ? s->spin_now : timeout_ns,
                      &s->round_ns, &elapsed);
        if (r != 0) {
            s->stats.wait_ns += elapsed;
            return r;
        }
    }
    for (;;) {
        uint64_t left = SHARED_RING_FOREVER;
        /* The peer may have detached or (in another process) died: look before sleeping, and
           sleep no longer than until the next look; before timing out too, or a wait whose
           timeout a spin covers (a poll loop's) would never hear of it. */
        r = srng_watch_peer(s, start + elapsed);
        if (r < 0) break;
        if (s->peer_gone && !s->gone_told) {
            /* The news, once (srng_tell_gone): what it published before it left comes first. */
            r = ready(ctx, 1);
            if (r == 0) r = srng_tell_gone(s);
            break;
        }
        if (timeout_ns != SHARED_RING_FOREVER) {
            /* Checked before sleeping too: a thread preempted in the spin may be past its timeout
               (timeout - elapsed would wrap). A backward clock ends the wait (elapsed wraps). */
            if (elapsed >= timeout_ns) {
                r = srng_timed_out(s->peer_gone != 0);
                break;
            }
            left = timeout_ns - elapsed;
        }
        if (r == 1) {
            uint64_t until_check = s->check_at - (start + elapsed);
            if (left > until_check) left = until_check;
        }
        /* A safety net, not part of the protocol: no wake-up is expected to be lost, but if one
           ever were, the wait goes on within recheck_ns, not never (counted in late_wakes). */
        capped = s->recheck_ns != 0 && left > s->recheck_ns;
        if (capped) left = s->recheck_ns;
        r = srng_foreign(s); /* a sleep is a system call anyway */
        if (r != SHARED_RING_OK) break;
        srng_choose_barrier(s); /* for a peer that attached since */
        if (!srng_announce_sleep(s, word, peer) && left > SRNG_SLICE_NS)
            left = SRNG_SLICE_NS;
        r = ready(ctx, 1);
        if (r != 0) break;
        /* a detach after our look (its word NONE before its owner word FREE): its wake-up may
           have missed us */
        SRNG_SCHED_POINT("sleep: last look");
        if (srng_side_news(s, peer_id, &seen_id, &seen_held) != 0) {
            /* news never outlasts a timeout, even with a still clock */
            elapsed = srng_elapsed_after(start, elapsed, 1000u); /* a microsecond a look */
            continue;
        }
        slept_at = capped ? SHARED_RING_NOW_NS() : 0;
        srng_sleep(s, word, SRNG_LOAD(peer_mode, relaxed), left);
        r = ready(ctx, 1);
        if (r != 0) {
            /* only a capped sleep reads the clock here */
            if (capped && SHARED_RING_NOW_NS() - slept_at >= s->recheck_ns) s->stats.late_wakes++;
            break;
        }
        elapsed = srng_elapsed_after(start, elapsed, left);
    }
    srng_withdraw(s, word, peer);
    elapsed = srng_elapsed_after(start, elapsed, 0); /* as counted, if the clock stood still */
    s->stats.wait_ns += elapsed;
    srng_adapt_spin(s, r, elapsed);
    return r;
}

/* The wake-up call a real-time side's own calls never make; attach, adopt and detach make it. */
static void srng_wake_from_realtime(shared_ring_side *s, srng_au32 *word) {
    if (SRNG_OS_SLEEP == SRNG_SLEEPS_NAPS) return;
    s->stats.wakes++;
    srng_os_wake(word);
}

/* Attach, adopt and detach wake a sleeping peer the way it sleeps, even from a real-time side:
   they are not among its calls that make no system call, and a peer that went to sleep trusting
   our predecessor's wake-ups would otherwise sleep to its timeout. */
static void srng_wake_sleeper_now(shared_ring_side *s, srng_au32 *word) {
    uint32_t was = SRNG_LOAD(word, relaxed);
    if (!s->realtime) {
        srng_wake_sleeper(s, word);
        return;
    }
    if (was == 0u) return;
    srng_answer_peer(s, word); /* chooses as its calls do, and makes no call */
    if (was == 1u) srng_wake_from_realtime(s, word);
}

/* A detach's wake-up: a sleeper's 1 swapped out and woken the way it sleeps (even from a real-time
   side, as srng_wake_sleeper_now), but no barrier chosen: the side is no longer ours, and a choice
   stored now could land over a successor's. A 2 (an attach's "look at me") stays for the next
   producer or consumer to answer. */
static void srng_wake_departing(shared_ring_side *s, srng_au32 *word) {
    uint32_t asleep = 1u;
    if (!SRNG_CAS(word, asleep, 0u)) return;
    if (!s->realtime)
        srng_wake(s, word);
    else
        srng_wake_from_realtime(s, word);
}

/* At attach (the handle's magic set): say how we sleep and wake, choose how we publish, leave
   SRNG_LOOK_AT_ME in our sleeping word so that the peer chooses again for us, and wake a peer that
   went to sleep trusting our predecessor's words (it re-reads ours when it wakes). */
static void srng_announce_mode(shared_ring_side *s) {
    srng_au32 *own = srng_u32_at(s->region, srng_own_sleeping(s));
    unsigned own_id = srng_own_id(s);
    s->process_barrier = SRNG_CAST(uint32_t, srng_register_process_barrier());
    SRNG_STORE(srng_beside(own, SRNG_MODE_WORD), srng_held_mode(s), relaxed); /* NONE -> HELD */
    SRNG_STORE(srng_fenceless_for(own), 0u, relaxed);
    if (s->magic == SRNG_PRODUCER_MAGIC)
        SRNG_STORE(srng_u64_at(s->region, SRNG_OFF_PRODUCER_BELLS), srng_bell_table(), relaxed);
    else
        SRNG_STORE(srng_beside(own, SRNG_BELL_WORD), 0u, relaxed); /* a dead consumer's */
    /* release: whoever reads our attach id also sees our pid, namespace and wait mode */
    SRNG_STORE(srng_u64_at(s->region, own_id + SRNG_ID_ATTACH), s->attach_id, release);
    srng_choose_barrier(s);
    SRNG_STORE(own, SRNG_LOOK_AT_ME, release);
    SRNG_FENCE();
    srng_wake_sleeper_now(s, srng_u32_at(s->region, srng_peer_sleeping(s)));
}

/* ---- attach ------------------------------------------------------------ */

/* The format-time header as attach read it: each word once, into locals, so a peer that rewrites
   the header while we attach cannot make us use a value other than the one we checked. */
typedef struct srng_geometry {
    uint64_t capacity;
    uint32_t max_message;
} srng_geometry;

static int srng_read_geometry(void *region, size_t region_size, srng_geometry *g) {
    const unsigned char *r = SRNG_CAST(const unsigned char *, region);
    const uint64_t size = region_size;
    uint64_t cap;
    uint32_t max, magic;
    int refused = srng_region_refusal(region, region_size);
    if (refused != SHARED_RING_OK) return refused;
    /* acquire pairs with format's release of the magic: a formatted header is seen whole. */
    magic = SRNG_LOAD(srng_u32_at(SRNG_CAST(unsigned char *, region), SRNG_OFF_MAGIC), acquire);
    SRNG_SCHED_POINT("load magic");
    if (magic != SHARED_RING_MAGIC) return srng_magic_refusal(magic);
    if (srng_get32(r, SRNG_OFF_VERSION) != SHARED_RING_LAYOUT_VERSION)
        return srng_explain(SHARED_RING_ERR_VERSION,
                            "the ring was formatted with layout version %u; this build reads %u",
                            srng_get32(r, SRNG_OFF_VERSION), SHARED_RING_LAYOUT_VERSION, 0);
    cap = srng_get64(r, SRNG_OFF_CAPACITY);
    max = srng_get32(r, SRNG_OFF_MAX_MESSAGE);
    if (!srng_capacity_ok(cap) || srng_get32(r, SRNG_OFF_DATA_OFFSET) != SHARED_RING_HEADER_SIZE ||
        max > srng_max_message_for(cap))
        return srng_explain(SHARED_RING_ERR_CORRUPT,
                            "the ring's header is inconsistent (capacity %u, max_message %u)", cap,
                            max, 0);
    if (size - SHARED_RING_HEADER_SIZE < cap)
        return srng_explain(SHARED_RING_ERR_SIZE,
                            "region_size %u is below the %u bytes this ring's header says it "
                            "has (capacity %u)",
                            region_size, cap + SHARED_RING_HEADER_SIZE, cap);
    g->capacity = cap;
    g->max_message = max;
    return SHARED_RING_OK;
}

/* The positions as both sides must see them: read <= write <= read + cap, both 8-aligned. */
static int srng_positions_ok(uint64_t read_pos, uint64_t write_pos, uint64_t cap) {
    return ((read_pos | write_pos) & 7u) == 0 && write_pos - read_pos <= cap;
}

/* The positions as found at attach: write_pos may lag read_pos by a record or corked batch (it is
   stored after the header that publishes), so either may be ahead, by at most the capacity. */
static int srng_positions_near(uint64_t read_pos, uint64_t write_pos, uint64_t cap) {
    uint64_t gap = srng_is_past(read_pos, write_pos) ? read_pos - write_pos : write_pos - read_pos;
    return ((read_pos | write_pos) & 7u) == 0 && gap <= cap;
}

/* A claim's mark in the side's attach id: the id it replaces (0: none), with SRNG_ID_CLAIMING set
   until its announce stores its own. No handle's id, so a handle it took the side back from finds
   its id gone; and a peer still reads whose departure it may be (srng_side_news). */
static void srng_mark_claiming(unsigned char *region, unsigned id_off) {
    srng_au64 *id = srng_u64_at(region, id_off + SRNG_ID_ATTACH);
    SRNG_STORE(id, SRNG_LOAD(id, relaxed) | SRNG_ID_CLAIMING, relaxed);
}

/* The next attach id of the region: never 0 (0 means "none"). */
static uint64_t srng_next_attach_id(unsigned char *region) {
    srng_au64 *count = srng_u64_at(region, SRNG_OFF_ATTACHES);
    for (;;) {
        uint64_t cur = SRNG_LOAD(count, relaxed), next = cur + 1u != 0u ? cur + 1u : 1u;
        if (SRNG_CAS(count, cur, next)) return next;
    }
}

/* An option's value: 0 is its default, SHARED_RING_OFF its zero. */
static uint32_t srng_setting(uint32_t given, uint32_t default_value) {
    if (given == 0u) return default_value;
    return given == SHARED_RING_OFF ? 0u : given;
}

/* The options as the handle uses them: NULL and zero fields are defaults, SHARED_RING_OFF is 0. */
static shared_ring_options srng_resolve_options(const shared_ring_options *given) {
    shared_ring_options o = SHARED_RING_OPTIONS_INIT;
    if (given == SRNG_NULL) return o;
    o = *given;
    o.spin_ns = srng_setting(o.spin_ns, SHARED_RING_DEFAULT_SPIN_NS);
    o.resume_percent = srng_setting(o.resume_percent, SHARED_RING_DEFAULT_RESUME_PERCENT);
    o.cork_limit = srng_setting(o.cork_limit, SHARED_RING_DEFAULT_CORK_LIMIT);
    o.recheck_ns = srng_setting(o.recheck_ns, SHARED_RING_DEFAULT_RECHECK_NS);
    o.trail_ns = srng_setting(o.trail_ns, SHARED_RING_DEFAULT_TRAIL_NS);
    o.spin_max_ns = srng_setting(o.spin_max_ns, SHARED_RING_DEFAULT_SPIN_MAX_NS);
    return o;
}

/* Validate the region and options, claim the side's identity block (given back on failure) and
   fill the common part of a handle. The caller sets the handle's magic last. */
static int srng_attach_side(shared_ring_side *s, void *region, size_t region_size,
                            const shared_ring_options *opt, unsigned id_off) {
    unsigned char *r8 = SRNG_CAST(unsigned char *, region);
    unsigned peer_off;
    uint64_t first_id;
    uint32_t first_held;
    srng_geometry g;
    int r;
    memset(&g, 0, sizeof g); /* set on every path that uses it; gcc -O3 cannot tell */
    s->lock_fd = -1;
    s->peer_fd = -1;
    r = srng_read_geometry(region, region_size, &g);
    if (r != SHARED_RING_OK) return r;
    if (opt->resume_percent > 100u)
        return srng_explain(SHARED_RING_ERR_ARG, "resume_percent %u is above 100",
                            opt->resume_percent, 0, 0);
    if ((opt->wait == SRNG_NULL) != (opt->wake == SRNG_NULL))
        return srng_refuse(SHARED_RING_ERR_ARG, "wait and wake hooks come as a pair: one is NULL");
    if ((opt->flags & ~(SHARED_RING_TAKE_BACK | SHARED_RING_POLL_ONLY | SHARED_RING_REALTIME)) != 0u)
        return srng_explain(SHARED_RING_ERR_ARG, "unknown flags (%u)", opt->flags, 0, 0);
    if ((opt->flags & (SHARED_RING_POLL_ONLY | SHARED_RING_REALTIME)) != 0u && opt->wake != SRNG_NULL)
        return srng_refuse(SHARED_RING_ERR_ARG,
                           "SHARED_RING_POLL_ONLY or SHARED_RING_REALTIME with wait and wake "
                           "hooks: a side that polls is woken by nothing, and a real-time one "
                           "calls nothing");
    r = srng_open_own(opt->region_fd, &s->lock_fd);
    if (r != SHARED_RING_OK) return r;
    r = srng_claim(r8, id_off, opt->flags, s->lock_fd, &s->owner);
    /* Once ATTACHED, our word may equal that of a handle we took the side back from (no LOCKED bit
       tells them apart): until announce publishes our id, no id is that handle's. That handle's
       look just before our claim and its move just after our ATTACHED still succeed (an ABA only
       a per-attach part in the word would close). */
    if (r == SHARED_RING_OK) srng_mark_claiming(r8, id_off);
    /* Read again: a prepare may have formatted the region anew before our claim; none can now, so
       this header is the one we attach to. */
    if (r == SHARED_RING_OK) r = srng_read_geometry(region, region_size, &g);
    /* The ring id in the locked file too? Asked once the claim holds the side: no format can
       change it now. */
    if (r == SHARED_RING_OK && s->lock_fd >= 0 &&
        !srng_file_shows(s->lock_fd, SRNG_OFF_RING_ID,
                         SRNG_LOAD(srng_u64_at(r8, SRNG_OFF_RING_ID), relaxed)))
        r = srng_wrong_file();
    if (r != SHARED_RING_OK) {
        srng_release_side(s, r8, id_off);
        return r;
    }
    s->region = r8;
    s->ring_id = SRNG_LOAD(srng_u64_at(s->region, SRNG_OFF_RING_ID), relaxed);
    SRNG_SCHED_POINT("load ring id");
    s->attach_id = srng_next_attach_id(s->region); /* published by srng_announce_mode */
    /* a peer attached now that leaves later has left; one gone before us never was our peer */
    peer_off = id_off == SRNG_OFF_PRODUCER_ID ? SRNG_OFF_CONSUMER_ID : SRNG_OFF_PRODUCER_ID;
    srng_note_peer(s, srng_owner_load(s->region, peer_off), 0u);
    (void)srng_side_news(s, peer_off, &first_id, &first_held);
    s->peer_attach = first_id;
    s->peer_held = first_held;
    s->data = s->region + SHARED_RING_HEADER_SIZE;
    s->capacity = g.capacity;
    s->mask = g.capacity - 1u;
    s->max_message = g.max_message;
    s->spin_ns = opt->spin_ns;
    s->spin_now = opt->spin_ns;
    s->spin_max = opt->spin_max_ns; /* below spin_ns: the spin stays at spin_ns */
    s->recheck_ns = opt->recheck_ns;
    s->wait = opt->wait;
    s->wake = opt->wake;
    s->hook_user = opt->hook_user;
    s->realtime = (opt->flags & SHARED_RING_REALTIME) != 0u;
    s->poll_only = (opt->flags & SHARED_RING_POLL_ONLY) != 0u || s->realtime;
    return SHARED_RING_OK;
}

/* An attach's last step, given what its own checks of the region found (`checked`): ATTACHED if
   they passed, else the claim given back. The caller's handle is untouched until the attach
   succeeded: a second attach on an attached handle leaves it working (it may be uninitialized). */
static int srng_conclude_attach(shared_ring_side *s, unsigned id_off, int checked) {
    int r = checked == SHARED_RING_OK ? srng_attached(s, id_off) : checked;
    if (r != SHARED_RING_OK) srng_release_side(s, s->region, id_off);
    return r;
}

/* Why a call on a handle of side `magic` may not go ahead: not that side's attached handle, inside
   one of its callbacks, or broken. (Handles share one size: a wrong-side read stays in bounds.) */
SRNG_COLD int srng_refusal(const shared_ring_side *s, uint32_t magic) {
    if (s == SRNG_NULL)
        return srng_refuse(SHARED_RING_ERR_HANDLE, "the handle is NULL");
    if (s->magic != magic)
        return srng_refuse(SHARED_RING_ERR_HANDLE,
                           magic == SRNG_PRODUCER_MAGIC
                               ? "the handle is not an attached producer (never attached, detached, "
                                 "or a consumer)"
                               : "the handle is not an attached consumer (never attached, detached, "
                                 "or a producer)");
    if (s->busy)
        return srng_refuse(SHARED_RING_ERR_STATE,
                           "called on a handle from inside its own callback (read, write or wait "
                           "hook)");
    if (s->broken)
        return srng_refuse(SHARED_RING_ERR_CORRUPT,
                           "this handle found the ring corrupt earlier, or formatted anew under it");
    return SHARED_RING_OK;
}

/* Is this an attached handle of that side? */
SRNG_INLINE int srng_is_producer(const shared_ring_producer *p) {
    return SRNG_LIKELY(p != SRNG_NULL) && SRNG_LIKELY(p->s.magic == SRNG_PRODUCER_MAGIC);
}
SRNG_INLINE int srng_is_consumer(const shared_ring_consumer *c) {
    return SRNG_LIKELY(c != SRNG_NULL) && SRNG_LIKELY(c->s.magic == SRNG_CONSUMER_MAGIC);
}

/* ---- record headers in the data area ------------------------------------- */

/* Padding is shorter than this: the producer pads out a lap's tail only when a record of at most
   max_message bytes and its largest filler (56 bytes) do not fit in it. A longer one is forged;
   past 8 * INT_MAX bytes (a ring of 32 GiB) a read_some could never step over it. */
SRNG_INLINE uint64_t srng_pad_bound(const shared_ring_side *s) {
    return srng_record_size(s->max_message) + 56u;
}

/* The record published at `pos`: its size in bytes, with its payload length in *len (SRNG_PAD_LEN
   for padding, which runs to the end of the data area); 0 when nothing is published there yet;
   SRNG_REC_BAD when the header is impossible. The header word is loaded once (acquire: it was
   stored after the payload) and only that copy is checked and used. */
SRNG_INLINE uint64_t srng_record_at(const shared_ring_side *s, uint64_t pos, uint32_t *len) {
    uint64_t off = pos & s->mask, room = s->capacity - off, rec;
    uint64_t h = SRNG_LOAD(srng_slot(s, pos), acquire);
    uint32_t n = SRNG_CAST(uint32_t, h);
    SRNG_SCHED_POINT("load record");
    if (SRNG_CAST(uint32_t, h >> 32) != srng_tag(pos)) return 0;
    *len = n;
    if (SRNG_LIKELY(n <= s->max_message)) {
        rec = srng_record_size(n);
        return rec <= room ? rec : SRNG_REC_BAD;
    }
    /* Only padding and fillers may be longer; no producer pads from offset 0 (the record fits),
       nor more than a record it could not fit. */
    if (n == SRNG_PAD_LEN) return off != 0 && room < srng_pad_bound(s) ? room : SRNG_REC_BAD;
    /* A filler's record follows it in the same lap. */
    return SRNG_IS_FILL(n) && SRNG_FILL_SIZE(n) < room ? SRNG_FILL_SIZE(n) : SRNG_REC_BAD;
}

static uint64_t srng_free_bytes(const shared_ring_producer *p) {
    return p->s.capacity - (p->write_pos - p->read_cache);
}

/* Recompute fast_left after anything that moved write_pos across a lap, read_cache, or the FULL
   latch: room before both the lap's end and the known free space's end (less the 8 bytes kept for
   the end mark). A length, not a position (see srng_deliver); each write takes its record off. */
static void srng_update_fast_left(shared_ring_producer *p) {
    uint64_t to_lap_end = p->s.capacity - (p->write_pos & p->s.mask);
    uint64_t free = srng_free_bytes(p);
    uint64_t room = free > SRNG_REC_HEADER ? srng_at_most(to_lap_end, free - SRNG_REC_HEADER) : 0u;
    p->fast_left = p->full_latched ? 0u : room;
}

/* A publish that fences waits there for every store of its record to reach our cache, and a line
   last held by the consumer's core, or by the L3, makes that wait long. So it asks for the line
   SRNG_PREFETCH_AHEAD bytes on, for writing, records before it is written (64-byte messages
   between processes: 1.07-1.66x in paired runs; docs/benchmarks.md). x86's PREFETCHW only (some
   older x86 CPUs fault on it: the producer's attach asks CPUID), and only a line that lies wholly
   in the known free room (fast_left, this record already taken off): one the consumer has yet to
   read would cost it a miss (a hint changes no data either way). Not on Windows. Out of line:
   inlined, its instructions cost the unfenced path in the same loop 3 (gcc) or 4 (clang)
   instructions a message (register allocation; make instructions); the call costs a fenced
   publish nothing measurable (0.99x, paired). */
#define SRNG_PREFETCH_AHEAD 512u
#if defined(SRNG_X86_ASM) && !defined(_WIN32) /* <cpuid.h>'s __cpuid clashes with <intrin.h>'s */
#include <cpuid.h>
static uint32_t srng_cpu_prefetchw(void) { /* CPUID 0x80000001, ECX bit 8 */
    unsigned a, b, c, d;
    return __get_cpuid(0x80000001u, &a, &b, &c, &d) != 0 && (c & (1u << 8)) != 0u ? 1u : 0u;
}
#if !defined(SRNG_PREFETCHW) /* a test may watch it */
#define SRNG_PREFETCHW(addr) \
    __asm__ __volatile__("prefetchw %0" : : "m"(*SRNG_PUN(const char *, addr)))
#endif
#else
static uint32_t srng_cpu_prefetchw(void) { return 0; }
#endif
#if !defined(SRNG_PREFETCHW)
#define SRNG_PREFETCHW(addr) ((void)(addr))
#endif
SRNG_NOINLINE void srng_prefetch_ahead(const shared_ring_producer *p) {
    if (p->prefetch_w && p->fast_left >= SRNG_PREFETCH_AHEAD + 64u)
        SRNG_PREFETCHW(srng_slot(&p->s, p->write_pos + SRNG_PREFETCH_AHEAD));
}
SHARED_RING_API void srng_fenced_prefetch(const shared_ring_producer *p) { srng_prefetch_ahead(p); }

/* Called after every change of cork_depth or published: srng_finish tests one word per message. */
static void srng_update_direct(shared_ring_producer *p) {
    p->direct = p->s.fenceless && p->cork_depth == 0 && p->published == p->write_pos;
}

/* While `direct` is 1 all written is published and srng_finish saves a store per message by not
   copying write_pos to `published`: read it via srng_published(), leave via srng_end_direct(). */
static uint64_t srng_published(const shared_ring_producer *p) {
    return p->direct ? p->write_pos : p->published;
}
static void srng_end_direct(shared_ring_producer *p) {
    p->published = srng_published(p);
    p->direct = 0;
}

/* Called after every change of claim_len (a claim opened or ended), closed or broken. */
static void srng_update_open(shared_ring_producer *p) {
    uint32_t claimed = p->claim_skip == 0 ? SRNG_CLAIM_OPEN : 0u; /* aligned: not inline */
    p->s.open = (p->s.broken | p->closed) != 0 ? 0u
                : p->claim_len != SRNG_NO_CLAIM ? claimed
                                                : SRNG_PRODUCER_MAGIC;
}

/* ---- setup -------------------------------------------------------------- */

/* `capacity` rounded up to a supported power of two, or 0 if none is that large. (size_t: on
   32-bit, doubling 2^31 gives 0, which is refused.) */
static size_t srng_round_capacity(size_t capacity) {
    size_t cap = SRNG_MIN_CAPACITY;
    while (cap < capacity && srng_capacity_ok(cap)) cap <<= 1;
    return srng_capacity_ok(cap) ? cap : 0;
}

/* The smallest capacity whose messages may be max_message long, or 0. */
static size_t srng_capacity_taking(size_t max_message) {
    size_t cap = SRNG_MIN_CAPACITY;
    if (max_message > SRNG_MAX_MESSAGE_LIMIT) return 0;
    while (cap != 0 && srng_max_message_for(cap) < max_message)
        cap = srng_capacity_ok(cap << 1) ? cap << 1 : 0;
    return cap;
}

SHARED_RING_API size_t shared_ring_region_size(size_t capacity, size_t max_message) {
    size_t cap;
    if (capacity == 0 && max_message == 0)
        return SRNG_CAST(size_t, srng_refuse(0, "capacity and max_message are both 0"));
    cap = capacity != 0 ? srng_round_capacity(capacity) : srng_capacity_taking(max_message);
    if (cap == 0)
        return SRNG_CAST(size_t, srng_explain(0, "no ring is that large (capacity %u, max_message %u)",
                                              capacity, max_message, 0));
    if (max_message > srng_max_message_for(cap))
        return SRNG_CAST(size_t, srng_explain(0,
                                              "max_message %u is above %u, the most a %u-byte "
                                              "capacity takes (capacity/2 - 8)",
                                              max_message, srng_max_message_for(cap), cap));
    return cap + SHARED_RING_HEADER_SIZE;
}

/* The largest supported capacity whose region fits region_size, or 0 (see srng_round_capacity). */
static size_t srng_capacity_fitting(size_t region_size) {
    size_t cap = 0, next = SRNG_MIN_CAPACITY;
    while (srng_capacity_ok(next) && region_size >= SHARED_RING_HEADER_SIZE &&
           region_size - SHARED_RING_HEADER_SIZE >= next) {
        cap = next;
        next *= 2u;
    }
    return cap;
}

/* Check format's arguments, and resolve capacity 0 and max_message 0. */
static int srng_format_args(void *region, size_t region_size, size_t *capacity,
                            size_t *max_message) {
    size_t asked = *capacity;
    if (region == SRNG_NULL) return srng_refuse(SHARED_RING_ERR_ARG, "region is NULL");
    if ((SRNG_PUN(uintptr_t, region) & 7u) != 0)
        return srng_refuse(SHARED_RING_ERR_ALIGN, "region is not 8-byte aligned");
    *capacity = asked != 0 ? srng_round_capacity(asked) : srng_capacity_fitting(region_size);
    if (*capacity == 0 && asked != 0)
        return srng_explain(SHARED_RING_ERR_SIZE, "capacity %u is larger than any ring", asked, 0, 0);
    if (*capacity == 0)
        return srng_explain(SHARED_RING_ERR_SIZE, "region_size %u holds no ring: the smallest needs %u",
                            region_size, SHARED_RING_HEADER_SIZE + SRNG_MIN_CAPACITY, 0);
    /* max_message first: region_size may be the 0 that region_size() gave for these very
       arguments, and the message size is then the cause */
    if (*max_message == 0) *max_message = srng_max_message_for(*capacity);
    if (*max_message > srng_max_message_for(*capacity))
        return srng_explain(SHARED_RING_ERR_ARG,
                            "max_message %u is above %u, the most a %u-byte capacity takes "
                            "(capacity/2 - 8)",
                            *max_message, srng_max_message_for(*capacity), *capacity);
    if (region_size < SHARED_RING_HEADER_SIZE || region_size - SHARED_RING_HEADER_SIZE < *capacity)
        return srng_explain(SHARED_RING_ERR_SIZE,
                            "region_size %u is below the %u bytes a %u-byte capacity needs "
                            "(shared_ring_region_size)",
                            region_size, *capacity + SHARED_RING_HEADER_SIZE, *capacity);
    return SHARED_RING_OK;
}

/* A fresh ring id: random enough to tell two formats of one region apart, never 0. */
static uint64_t srng_new_ring_id(const void *region) {
    static srng_au64 counter;
    uint64_t n = SRNG_LOAD(&counter, relaxed) + 1u, x;
    SRNG_STORE(&counter, n, relaxed);
    x = SHARED_RING_NOW_NS() ^ srng_mix(SRNG_PUN(uintptr_t, region) + n) ^
        SRNG_CAST(uint64_t, time(SRNG_NULL)) << 20;
#ifdef SRNG_HAVE_IDENTITY
    x ^= SRNG_CAST(uint64_t, srng_getpid()) << 40;
#endif
    x = srng_mix(x);
    return x != 0 ? x : 1u;
}

/* Clear a side's block [id_off, end) but its owner word and the identity slot beside it: the
   preparer that formats holds the word (format clears it, prepare gives it back at the end), and
   a judge places its pid by that slot. */
static void srng_clear_side(unsigned char *r, unsigned id_off, unsigned end) {
    SRNG_STORE(srng_u64_at(r, id_off + SRNG_ID_ATTACH), 0u, relaxed);
    memset(r + id_off + SRNG_ID_END, 0, end - id_off - SRNG_ID_END);
}

static void srng_write_header(unsigned char *r, size_t capacity, size_t max_message) {
    /* Magic cleared first, fenced ahead of the rest: an attach in progress sees "not formatted" */
    SRNG_STORE(srng_u32_at(r, SRNG_OFF_MAGIC), 0u, relaxed);
    SRNG_FENCE();
    SRNG_SCHED_POINT("format: magic cleared");
    memset(r + 4, 0, SRNG_OFF_PRODUCER_ID - 4u);
    srng_clear_side(r, SRNG_OFF_PRODUCER_ID, SRNG_OFF_CONSUMER_ID);
    srng_clear_side(r, SRNG_OFF_CONSUMER_ID, SHARED_RING_HEADER_SIZE);
    srng_put32(r, SRNG_OFF_VERSION, SHARED_RING_LAYOUT_VERSION);
    srng_put64(r, SRNG_OFF_CAPACITY, capacity);
    srng_put32(r, SRNG_OFF_MAX_MESSAGE, SRNG_CAST(uint32_t, max_message));
    srng_put32(r, SRNG_OFF_DATA_OFFSET, SHARED_RING_HEADER_SIZE);
    SRNG_STORE(srng_u64_at(r, SRNG_OFF_RING_ID), srng_new_ring_id(r), relaxed);
    /* Position 0 holds no record yet: its header word is 0 (never a tag). */
    SRNG_STORE(srng_u64_at(r, SHARED_RING_HEADER_SIZE), 0u, relaxed);
    /* The magic last, with release: a peer that sees it also sees the rest of the header. */
    SRNG_STORE(srng_u32_at(r, SRNG_OFF_MAGIC), SHARED_RING_MAGIC, release);
    SRNG_SCHED_POINT("format: magic stored");
}

SHARED_RING_API int shared_ring_format(void *region, size_t region_size, size_t capacity,
                                       size_t max_message) {
    unsigned char *r = SRNG_CAST(unsigned char *, region);
    int res = srng_format_args(region, region_size, &capacity, &max_message);
    if (res != SHARED_RING_OK) return res;
    SRNG_STORE(srng_owner_at(r, SRNG_OFF_PRODUCER_ID), 0u, relaxed);
    SRNG_STORE(srng_owner_at(r, SRNG_OFF_CONSUMER_ID), 0u, relaxed);
    srng_write_header(r, capacity, max_message);
    return SHARED_RING_OK;
}

#ifdef SRNG_HAVE_IDENTITY
/* Does the region hold a stream not yet read to its end: an unreleased record at read_pos, or an
   unread close? prepare keeps such a ring: it never drops what was published. The record is looked
   for first, whatever close_seen says: a peek sets it on reaching the close, which may lie
   messages past read_pos, and a consumer that dies before releasing them owes them to the next one
   (at-least-once). Impossible positions, or a corrupt flag, leave nothing that can be read. */
static int srng_holds_stream(unsigned char *r, size_t region_size) {
    shared_ring_side s;
    srng_geometry g;
    uint64_t rd, w, rec;
    uint32_t len = 0;
    if (srng_read_geometry(r, region_size, &g) != SHARED_RING_OK ||
        SRNG_LOAD(srng_u32_at(r, SRNG_OFF_CORRUPT), relaxed) != 0u)
        return 0;
    rd = SRNG_LOAD(srng_u64_at(r, SRNG_OFF_READ_POS), acquire);
    w = SRNG_LOAD(srng_u64_at(r, SRNG_OFF_WRITE_POS), acquire);
    if (!srng_positions_near(rd, w, g.capacity)) return 0;
    memset(&s, 0, sizeof s);
    s.data = r + SHARED_RING_HEADER_SIZE;
    s.capacity = g.capacity;
    s.mask = g.capacity - 1u;
    s.max_message = g.max_message;
    rec = srng_record_at(&s, rd, &len);
    if (rec != 0 && rec != SRNG_REC_BAD && len == SRNG_PAD_LEN) rec = srng_record_at(&s, rd + rec, &len);
    if (rec != 0 && rec != SRNG_REC_BAD) return 1; /* an unreleased record */
    return SRNG_LOAD(srng_u32_at(r, SRNG_OFF_CLOSED), acquire) != 0u &&
           SRNG_LOAD(srng_u32_at(r, SRNG_OFF_CLOSE_SEEN), relaxed) == 0u; /* an unread close */
}

/* prepare's hold on one side, as srng_claim's: *mark (FORMATTING, LOCKED once the lock is ours).
   Returns OK, 1 (a live side is attached), ERR_BUSY (a live prepare or attach holds or is taking
   it: try again) or ERR_ARG (region_fd is not this region's file). */
static int srng_hold_side(unsigned char *r, unsigned id_off, uint64_t *mark, int own) {
    uint64_t live = 0;
    int taken = srng_take(r, id_off, mark, 0, 0, own, &live);
    if (taken != 0) return taken > 0 ? SHARED_RING_OK : taken;
    /* An attach or prepare in progress ends soon: attached (ring kept) or gone (we try again). */
    return srng_is_attached(live) ? 1 : SHARED_RING_ERR_BUSY;
}

/* prepare's hold on the region: both owner words, producer first. Returns as srng_hold_side; on a
   refusal the word already taken is given back (a FORMATTING word is never a peer: no reader sees
   it come and go). */
static int srng_hold_for_format(unsigned char *r, int own) {
    uint64_t mine = srng_in_state(srng_my_word(), SRNG_FORMATTING);
    uint64_t producer = mine, consumer = mine;
    int res = srng_hold_side(r, SRNG_OFF_PRODUCER_ID, &producer, own);
    if (res != SHARED_RING_OK) return res;
    res = srng_hold_side(r, SRNG_OFF_CONSUMER_ID, &consumer, own);
    if (res != SHARED_RING_OK) (void)srng_owner_move(r, SRNG_OFF_PRODUCER_ID, producer, 0u);
    return res;
}

/* Format unless in use, holding both sides. The locks go with our description, closed between
   tries (a failed try must not keep a byte another prepare waits for) and after the words. */
static int srng_prepare_held(unsigned char *r, size_t region_size, size_t capacity,
                             size_t max_message, int region_fd) {
    int own, tries, res;
    /* Another prepare or an attach holds a side for microseconds: wait, then judge again. */
    for (tries = 0;; tries++) {
        res = srng_open_own(region_fd, &own);
        if (res != SHARED_RING_OK) return res;
        res = srng_hold_for_format(r, own);
        if (res != SHARED_RING_ERR_BUSY) break;
        srng_close_own(own);
        if (tries == 1000)
            return srng_refuse(SHARED_RING_ERR_BUSY,
                               "another process has held the region for formatting for a "
                               "second (stopped in the middle?)");
        srng_nap(1000000u);
    }
    if (res == SHARED_RING_OK) {
        uint64_t producer = srng_owner_load(r, SRNG_OFF_PRODUCER_ID);
        uint64_t consumer = srng_owner_load(r, SRNG_OFF_CONSUMER_ID);
        /* Both sides held: nothing can attach, publish or release now. */
        res = srng_holds_stream(r, region_size);
        if (res == 0) srng_write_header(r, capacity, max_message);
        (void)srng_owner_move(r, SRNG_OFF_PRODUCER_ID, producer, 0u);
        (void)srng_owner_move(r, SRNG_OFF_CONSUMER_ID, consumer, 0u);
    }
    srng_close_own(own);
    return res;
}
#endif

SHARED_RING_API int shared_ring_prepare(void *region, size_t region_size, size_t capacity,
                                        size_t max_message, int region_fd) {
    unsigned char *r = SRNG_CAST(unsigned char *, region);
    int res = srng_format_args(region, region_size, &capacity, &max_message);
    if (res != SHARED_RING_OK) return res;
#ifdef SRNG_HAVE_IDENTITY
    return srng_prepare_held(r, region_size, capacity, max_message, region_fd);
#else
    (void)region_fd;
    /* Who is alive cannot be told here: a formatted ring is left alone. */
    if (SRNG_LOAD(srng_u32_at(r, SRNG_OFF_MAGIC), acquire) == SHARED_RING_MAGIC &&
        srng_get32(r, SRNG_OFF_VERSION) == SHARED_RING_LAYOUT_VERSION)
        return 1;
    srng_write_header(r, capacity, max_message);
    return SHARED_RING_OK;
#endif
}

SHARED_RING_API shared_ring_options shared_ring_default_options(void) {
    shared_ring_options o = SHARED_RING_OPTIONS_INIT;
    return o;
}

/* A restarted producer continues after the last published record. write_pos is stored after a
   record's header, so a producer that died between leaves it a record (or corked batch) behind:
   walk the records from there, at most one capacity. Returns the end, or SRNG_REC_BAD. */
static uint64_t srng_find_end(const shared_ring_side *s, uint64_t write_pos, uint64_t read_pos) {
    uint64_t pos = write_pos, rec;
    uint32_t len;
    if (!srng_positions_near(read_pos, write_pos, s->capacity)) return SRNG_REC_BAD;
    for (;;) {
        rec = srng_record_at(s, pos, &len);
        if (rec == 0) break;
        if (rec == SRNG_REC_BAD || rec > write_pos + s->capacity - pos) return SRNG_REC_BAD;
        pos += rec;
    }
    /* the 8 bytes after the last record stay free (see srng_begin_slow) */
    return srng_positions_ok(read_pos, pos, s->capacity - SRNG_REC_HEADER) ? pos : SRNG_REC_BAD;
}

SHARED_RING_API int shared_ring_attach_producer(shared_ring_producer *p, void *region,
                                                size_t region_size,
                                                const shared_ring_options *opt) {
    shared_ring_options o = srng_resolve_options(opt);
    shared_ring_producer h; /* copied to *p on success only */
    uint64_t end, rd;
    int r;
    if (p == SRNG_NULL) return srng_refuse(SHARED_RING_ERR_ARG, "the handle is NULL");
    memset(&h, 0, sizeof h);
    h.claim_len = SRNG_NO_CLAIM;
    r = srng_attach_side(&h.s, region, region_size, &o, SRNG_OFF_PRODUCER_ID);
    if (r != SHARED_RING_OK) return r;
    rd = SRNG_LOAD(srng_u64_at(h.s.region, SRNG_OFF_READ_POS), acquire);
    end = srng_find_end(&h.s, SRNG_LOAD(srng_u64_at(h.s.region, SRNG_OFF_WRITE_POS), acquire), rd);
    r = end != SRNG_REC_BAD ? SHARED_RING_OK
                            : srng_refuse(SHARED_RING_ERR_CORRUPT,
                                          "the ring's positions or records are impossible");
    r = srng_conclude_attach(&h.s, SRNG_OFF_PRODUCER_ID, r);
    if (r != SHARED_RING_OK) return r;
    h.write_pos = h.published = end;
    h.read_cache = rd;
    SRNG_STORE(srng_u64_at(h.s.region, SRNG_OFF_WRITE_POS), end, release);
    /* capacity * percent / 100 without overflowing 64 bits */
    h.resume_free =
        h.s.capacity / 100u * o.resume_percent + h.s.capacity % 100u * o.resume_percent / 100u;
    h.cork_limit = o.cork_limit != 0u ? o.cork_limit : UINT64_MAX;
    h.closed = SRNG_LOAD(srng_u32_at(h.s.region, SRNG_OFF_CLOSED), acquire) != 0u;
    srng_update_fast_left(&h);
    h.prefetch_w = srng_cpu_prefetchw();
    h.s.magic = SRNG_PRODUCER_MAGIC; /* nothing fails from here on */
    *p = h;
    srng_announce_mode(&p->s);
    srng_update_open(p);
    return SHARED_RING_OK;
}

/* Trailing a dense stream (see srng_hold_off): the numbers. */
enum {
    SRNG_TRAIL_BYTES = 65536,
    SRNG_TRAIL_MIN = 16,         /* messages, or */
    SRNG_TRAIL_MIN_BYTES = 1024, /* bytes published, that make a hold-off dense */
    SRNG_SLOW_HOLDS = 2, /* paced hold-offs (no faster one between) that end trailing */
    SRNG_TRIAL_FIRST = 16,
    SRNG_TRIAL_LAST = 4096,
    SRNG_HOLD_PAUSES = 4,      /* pauses between looks at the clock */
    SRNG_HOLD_LOOK_EVERY = 8,  /* clock looks per look at write_pos */
    SRNG_HOLD_STILL_MAX = 1024 /* looks at a clock that stands still */
};

SHARED_RING_API int shared_ring_attach_consumer(shared_ring_consumer *c, void *region,
                                                size_t region_size,
                                                const shared_ring_options *opt) {
    shared_ring_options o = srng_resolve_options(opt);
    shared_ring_consumer h; /* copied to *c on success only */
    uint64_t rd, w;
    int r;
    if (c == SRNG_NULL) return srng_refuse(SHARED_RING_ERR_ARG, "the handle is NULL");
    memset(&h, 0, sizeof h);
    r = srng_attach_side(&h.s, region, region_size, &o, SRNG_OFF_CONSUMER_ID);
    if (r != SHARED_RING_OK) return r;
    rd = SRNG_LOAD(srng_u64_at(h.s.region, SRNG_OFF_READ_POS), acquire);
    w = SRNG_LOAD(srng_u64_at(h.s.region, SRNG_OFF_WRITE_POS), acquire);
    r = srng_positions_near(rd, w, h.s.capacity)
            ? SHARED_RING_OK
            : srng_refuse(SHARED_RING_ERR_CORRUPT, "the ring's positions are impossible");
    r = srng_conclude_attach(&h.s, SRNG_OFF_CONSUMER_ID, r);
    if (r != SHARED_RING_OK) return r;
    h.read_pos = h.peek_pos = rd;
    h.write_cache = w;
    h.trail_ns = o.trail_ns;
    h.trial_gap = SRNG_TRIAL_FIRST;
    h.s.magic = SRNG_CONSUMER_MAGIC; /* nothing fails from here on */
    *c = h;
    srng_announce_mode(&c->s);
    c->s.open = SRNG_CONSUMER_MAGIC;
    return SHARED_RING_OK;
}

/* Attach one side, retrying every millisecond while the region is not formatted yet. */
static int srng_attach_wait(shared_ring_producer *p, shared_ring_consumer *c, void *region,
                            size_t region_size, const shared_ring_options *opt,
                            uint64_t timeout_ns) {
    uint64_t start = SHARED_RING_NOW_NS(), elapsed = 0;
    for (;;) {
        int r = p != SRNG_NULL ? shared_ring_attach_producer(p, region, region_size, opt)
                               : shared_ring_attach_consumer(c, region, region_size, opt);
        if (r != SHARED_RING_NOT_FORMATTED || timeout_ns == 0) return r;
        if (!srng_nap_unless_timed_out(start, &elapsed, timeout_ns))
            return srng_refuse(SHARED_RING_TIMEOUT,
                               "the region was not formatted within the timeout");
    }
}

SHARED_RING_API int shared_ring_attach_producer_wait(shared_ring_producer *p, void *region,
                                                     size_t region_size,
                                                     const shared_ring_options *opt,
                                                     uint64_t timeout_ns) {
    if (p == SRNG_NULL) return srng_refuse(SHARED_RING_ERR_ARG, "the handle is NULL");
    return srng_attach_wait(p, SRNG_NULL, region, region_size, opt, timeout_ns);
}

SHARED_RING_API int shared_ring_attach_consumer_wait(shared_ring_consumer *c, void *region,
                                                     size_t region_size,
                                                     const shared_ring_options *opt,
                                                     uint64_t timeout_ns) {
    if (c == SRNG_NULL) return srng_refuse(SHARED_RING_ERR_ARG, "the handle is NULL");
    return srng_attach_wait(SRNG_NULL, c, region, region_size, opt, timeout_ns);
}

/* ---- producer ------------------------------------------------------------ */

/* Refusal out of line, behind a test of the usual case: a function that always calls a cold one is
   compiled cold (for size, slower fence), and commit, abort, cork, uncork, flush are common. */
SRNG_INLINE int srng_producer_ok(const shared_ring_producer *p) {
    if (SRNG_LIKELY(p != SRNG_NULL) && SRNG_LIKELY(p->s.magic == SRNG_PRODUCER_MAGIC) &&
        SRNG_LIKELY((p->s.busy | p->s.broken) == 0))
        return SHARED_RING_OK;
    return srng_refusal(p != SRNG_NULL ? &p->s : SRNG_NULL, SRNG_PRODUCER_MAGIC);
}

/* Tell the consumer how far we published (it reads this only when it finds no record: to tell
   "empty" from "corrupt", and for inspection) and wake it if it sleeps. */
SRNG_INLINE void srng_announce_end(shared_ring_producer *p) {
    unsigned char *region = p->s.region;
    SRNG_STORE(srng_u64_at(region, SRNG_OFF_WRITE_POS), p->published, release);
    SRNG_SCHED_POINT("publish");
    srng_wake_if_sleeping(&p->s, srng_u32_at(region, SRNG_OFF_CONSUMER_SLEEPING));
}

/* Make everything written visible: the held-back header of the first unpublished record goes out
   last, with release, and with it every record behind it. */
SRNG_INLINE void srng_publish(shared_ring_producer *p) {
    if (srng_published(p) == p->write_pos) return;
    SRNG_STORE(srng_slot(&p->s, p->published), p->pending, release);
    p->published = p->write_pos;
    srng_update_direct(p);
    if (!p->s.fenceless) srng_fenced_prefetch(p);
    srng_announce_end(p);
}

/* The consumer may be hostile: a read_pos outside [published - cap, published] is corruption. */
static int srng_refresh_read(shared_ring_producer *p) {
    uint64_t rd = SRNG_LOAD(srng_u64_at(p->s.region, SRNG_OFF_READ_POS), acquire);
    /* The consumer's corrupt flag shares read_pos's cache line: free to check. */
    if (!srng_positions_ok(rd, srng_published(p), p->s.capacity) ||
        srng_is_past(p->read_cache, rd) ||
        SRNG_LOAD(srng_u32_at(p->s.region, SRNG_OFF_CORRUPT), relaxed) != 0u) {
        p->s.broken = 1;
        srng_update_open(p);
        return srng_explain(SHARED_RING_ERR_CORRUPT,
                            "the consumer's read_pos %u is impossible (published %u), or it "
                            "flagged the ring corrupt",
                            rd, srng_published(p), 0);
    }
    p->read_cache = rd;
    return SHARED_RING_OK;
}

typedef struct srng_space_wait {
    shared_ring_producer *p;
    uint64_t want;
} srng_space_wait;

static int srng_space_ready(void *ctx, int thorough) {
    srng_space_wait *w = SRNG_CAST(srng_space_wait *, ctx);
    int r;
    (void)thorough; /* read_pos and the corrupt flag share one line */
    r = srng_refresh_read(w->p);
    if (r != SHARED_RING_OK) return r;
    return srng_free_bytes(w->p) >= w->want;
}

/* Make `need` bytes free (record, plus padding at the wrap), honouring the hysteresis. */
static int srng_reserve(shared_ring_producer *p, uint64_t need, uint64_t timeout_ns) {
    srng_space_wait w;
    /* Every slow path checks the ring id (a format under us), read_pos and the corrupt flag
       beside it: at least once per lap (fast_left stops at the data area's end), so a consumer's
       ERR_CORRUPT is seen within a capacity of writes without reading its line per message. */
    int r = srng_same_ring(&p->s);
    if (r == SHARED_RING_OK) r = srng_refresh_read(p);
    if (r != SHARED_RING_OK) return r;
    w.p = p;
    w.want = p->resume_free > need ? p->resume_free : need;
    if (!p->full_latched) {
        if (srng_free_bytes(p) >= need) return SHARED_RING_OK;
        p->full_latched = 1;
    }
    if (srng_free_bytes(p) >= w.want) {
        p->full_latched = 0;
        return SHARED_RING_OK;
    }
    /* Waiting or not, let the consumer drain what a cork holds back: else a producer retrying a
       write with timeout 0 while corked would never progress. */
    srng_publish(p);
    if (timeout_ns == 0) {
        /* consumer left (owner word, or a peer fd fired): said after a look at what it released */
        if (srng_peer_left(&p->s)) {
            r = srng_space_ready(&w, 1);
            if (r == 1) {
                p->full_latched = 0;
                return SHARED_RING_OK;
            }
            return r < 0 ? r : srng_tell_gone(&p->s);
        }
        return srng_refuse(SHARED_RING_FULL, "no room for the message now");
    }
    SRNG_STORE(srng_u64_at(p->s.region, SRNG_OFF_PRODUCER_WAKE_POS),
               p->write_pos + w.want - p->s.capacity, relaxed);
    r = srng_block(&p->s, srng_u32_at(p->s.region, SRNG_OFF_PRODUCER_SLEEPING),
                   srng_u32_at(p->s.region, SRNG_OFF_CONSUMER_SLEEPING), srng_space_ready, &w,
                   timeout_ns);
    if (r == 1) {
        p->full_latched = 0;
        return SHARED_RING_OK;
    }
    return r;
}

/* Why a producer call may not write: unattached, corrupt, claim open or closed (one fast test). */
static int srng_write_gate(const shared_ring_producer *p) {
    int r;
    if (SRNG_LIKELY(p != SRNG_NULL) && SRNG_LIKELY(p->s.open == SRNG_PRODUCER_MAGIC))
        return SHARED_RING_OK;
    r = srng_producer_ok(p);
    if (r != SHARED_RING_OK) return r;
    if (p->claim_len != SRNG_NO_CLAIM)
        return srng_refuse(SHARED_RING_ERR_STATE, "a claim is open: commit or abort it first");
    return srng_refuse(SHARED_RING_CLOSED, "this producer closed the stream: nothing more goes in");
}

/* Append a `rec`-byte record's header at write_pos, first zeroing the word after it: the consumer
   looks there next and must not find an earlier lap's bytes. The first unpublished header waits in
   `pending` (srng_publish stores it); later ones go straight in: the consumer cannot pass it. */
SRNG_INLINE void srng_append(shared_ring_producer *p, uint32_t len, uint64_t rec) {
    uint64_t pos = p->write_pos, hdr = srng_header(pos, len);
    srng_end_direct(p); /* `pending` is held back now */
    SRNG_STORE(srng_slot(&p->s, pos + rec), 0u, relaxed);
    if (pos == p->published)
        p->pending = hdr;
    else
        SRNG_STORE(srng_slot(&p->s, pos), hdr, relaxed);
    p->write_pos = pos + rec;
    p->fast_left -= rec; /* padding may take more: srng_begin_slow recomputes it */
}

/* Slow path of srng_begin: wait for room (or pad out the tail first). */
static int srng_begin_slow(shared_ring_producer *p, uint64_t rec, uint64_t timeout_ns,
                           unsigned char **dst) {
    uint64_t off = p->write_pos & p->s.mask;
    uint64_t tail = p->s.capacity - off;
    /* The 8 bytes after the last record stay free, for the zero word: "nothing here yet". */
    int r = srng_reserve(p, (rec <= tail ? rec : tail + rec) + SRNG_REC_HEADER, timeout_ns);
    if (r == SHARED_RING_OK && rec > tail) {
        /* Records never wrap: pad out the tail and start at offset 0. */
        srng_append(p, SRNG_PAD_LEN, tail);
        off = 0;
    }
    srng_update_fast_left(p); /* read_cache, the latch or the lap changed */
    if (r != SHARED_RING_OK) return r;
    *dst = p->s.data + off + SRNG_REC_HEADER;
    return SHARED_RING_OK;
}

/* Reserve a record for up to `len` payload bytes plus `extra` (an aligned claim's filler); *dst is
   the payload if no filler comes first. The caller has passed srng_write_gate(). */
SRNG_INLINE int srng_begin(shared_ring_producer *p, size_t len, size_t extra, uint64_t timeout_ns,
                           unsigned char **dst) {
    uint64_t rec;
    if (len > p->s.max_message)
        return srng_explain(SHARED_RING_ERR_TOO_BIG, "a %u-byte message is above max_message %u",
                            len, p->s.max_message, 0);
    rec = srng_record_size(len) + extra;
    if (SRNG_LIKELY(rec <= p->fast_left)) {
        *dst = srng_payload(&p->s, p->write_pos);
        return SHARED_RING_OK;
    }
    return srng_begin_slow(p, rec, timeout_ns, dst);
}

/* Finish the record begun at write_pos + skip (after an aligned claim's `skip`-byte filler) as a
   `len`-byte message, count it, and publish unless corked (a corked batch past cork_limit is
   published too: holding more back only keeps the consumer idle). */
SRNG_INLINE void srng_finish(shared_ring_producer *p, unsigned char *payload, size_t len,
                             uint32_t skip) {
    if (SRNG_LIKELY(p->direct)) { /* nothing held back, no fence: one flag, not three tests */
        srng_publish_direct(p, p->write_pos, payload, len, skip, 0);
        return;
    }
    srng_count_message(&p->s.stats, len);
    if (skip != 0) srng_append(p, SRNG_FILL_LEN(skip), skip); /* never out alone */
    srng_append(p, SRNG_CAST(uint32_t, len), srng_record_size(len));
    if (p->cork_depth == 0 || p->write_pos - p->published >= p->cork_limit) srng_publish(p);
}

/* claim and claim_aligned: a `skip`-byte filler (written at commit) puts payload at `align`. */
SRNG_INLINE int srng_claim_record(shared_ring_producer *p, size_t len, size_t align, void **out,
                                  uint64_t timeout_ns) {
    unsigned char *dst;
    size_t skip;
    int r;
    if (out != SRNG_NULL) *out = SRNG_NULL;
    r = srng_write_gate(p);
    if (r != SHARED_RING_OK) return r;
    if (out == SRNG_NULL) return srng_refuse(SHARED_RING_ERR_ARG, "out is NULL");
    if (align != 8 && align != 16 && align != 32 && align != 64)
        return srng_explain(SHARED_RING_ERR_ARG, "align %u is not 8, 16, 32 or 64", align, 0, 0);
    if ((SRNG_PUN(uintptr_t, p->s.data) & (align - 1u)) != 0)
        return srng_explain(SHARED_RING_ERR_ALIGN,
                            "the region is not %u-byte aligned in this process (its data area "
                            "starts at an address that is %u mod %u)",
                            align, SRNG_PUN(uintptr_t, p->s.data) & (align - 1u), align);
    /* Record plus largest filler must fit in half the ring, like the longest message: else,
       reserved after the lap's tail, they could need more than the capacity (FULL for ever). */
    if (len <= p->s.max_message &&
        srng_record_size(len) + align - SRNG_REC_HEADER > p->s.capacity / 2u)
        return srng_explain(SHARED_RING_ERR_TOO_BIG,
                            "a %u-byte claim aligned to %u needs room for its filler too: at most "
                            "capacity/2 - align (capacity %u)",
                            len, align, p->s.capacity);
    /* Room for record and largest filler wherever it lands (at offset 0 if the lap ends first) */
    r = srng_begin(p, len, align - SRNG_REC_HEADER, timeout_ns, &dst);
    if (r != SHARED_RING_OK) return r;
    skip = (align - (SRNG_PUN(uintptr_t, dst) & (align - 1u))) & (align - 1u);
    p->claim_len = len;
    p->claim_skip = SRNG_CAST(uint32_t, skip);
    srng_update_open(p);
    *out = dst + skip;
    return SHARED_RING_OK;
}

/* Parenthesized: the names are also the fast path's macros. */
SHARED_RING_API int(shared_ring_claim)(shared_ring_producer *p, size_t len, void **out,
                                      uint64_t timeout_ns) {
    return srng_claim_record(p, len, 8, out, timeout_ns);
}

SHARED_RING_API int shared_ring_claim_aligned(shared_ring_producer *p, size_t len, size_t align,
                                              void **out, uint64_t timeout_ns) {
    return srng_claim_record(p, len, align, out, timeout_ns);
}

SHARED_RING_API int(shared_ring_commit)(shared_ring_producer *p, size_t len) {
    int r = srng_producer_ok(p);
    uint32_t skip;
    if (r != SHARED_RING_OK) return r;
    if (p->claim_len == SRNG_NO_CLAIM)
        return srng_refuse(SHARED_RING_ERR_STATE, "no claim is open");
    if (len > p->claim_len)
        return srng_explain(SHARED_RING_ERR_TOO_BIG,
                            "commit of %u bytes is above the %u claimed (the claim stays open)",
                            len, p->claim_len, 0);
    skip = p->claim_skip;
    p->claim_len = SRNG_NO_CLAIM;
    p->claim_skip = 0; /* the inline claim does not store it: it must be 0 when none is open */
    srng_update_open(p);
    if (SRNG_LIKELY(skip == 0)) /* a plain claim: skip is 0 at compile time */
        srng_finish(p, srng_payload(&p->s, p->write_pos), len, 0);
    else
        srng_finish(p, srng_payload(&p->s, p->write_pos + skip), len, skip);
    return SHARED_RING_OK;
}

SHARED_RING_API int shared_ring_abort(shared_ring_producer *p) {
    int r = srng_producer_ok(p);
    /* Dropping a claim is harmless on a broken ring: let it be undone. */
    if (r != SHARED_RING_OK && r != SHARED_RING_ERR_CORRUPT) return r;
    if (p->claim_len == SRNG_NO_CLAIM)
        return srng_refuse(SHARED_RING_ERR_STATE, "no claim is open");
    p->claim_len = SRNG_NO_CLAIM;
    p->claim_skip = 0; /* as at commit */
    srng_update_open(p);
    return SHARED_RING_OK;
}

SHARED_RING_API int shared_ring_write(shared_ring_producer *p, size_t max_len,
                                      shared_ring_fill_fn fill, void *user, uint64_t timeout_ns) {
    unsigned char *dst;
    size_t n;
    int r = srng_write_gate(p);
    if (r != SHARED_RING_OK) return r;
    if (fill == SRNG_NULL) return srng_refuse(SHARED_RING_ERR_ARG, "fill is NULL");
    r = srng_begin(p, max_len, 0, timeout_ns, &dst);
    if (r != SHARED_RING_OK) return r;
    srng_enter_callback(&p->s);
    n = fill(user, dst, max_len);
    srng_leave_callback(&p->s, SRNG_PRODUCER_MAGIC); /* the gate was open */
    if (n > max_len) /* nothing was published */
        return srng_explain(SHARED_RING_ERR_TOO_BIG,
                            "fill returned %u, above max_len %u: nothing was written", n, max_len,
                            0);
    srng_finish(p, dst, n, 0);
    return SHARED_RING_OK;
}

SRNG_INLINE int srng_write_copy(shared_ring_producer *p, const void *data, size_t len,
                                uint64_t timeout_ns) {
    unsigned char *dst;
    int r = srng_begin(p, len, 0, timeout_ns, &dst);
    if (r != SHARED_RING_OK) return r;
    if (len != 0) memcpy(dst, data, len);
    srng_finish(p, dst, len, 0);
    return SHARED_RING_OK;
}

/* Parenthesized: the name is also the fast path's macro. */
SHARED_RING_API int(shared_ring_write_bytes)(shared_ring_producer *p, const void *data, size_t len,
                                            uint64_t timeout_ns) {
    int r = srng_write_gate(p);
    if (r != SHARED_RING_OK) return r;
    if (data == SRNG_NULL && len != 0)
        return srng_explain(SHARED_RING_ERR_ARG, "data is NULL with len %u", len, 0, 0);
    return srng_write_copy(p, data, len, timeout_ns);
}

SHARED_RING_API int shared_ring_write_str(shared_ring_producer *p, const char *str,
                                          uint64_t timeout_ns) {
    const char *end;
    int r = srng_write_gate(p);
    if (r != SHARED_RING_OK) return r;
    if (str == SRNG_NULL) return srng_refuse(SHARED_RING_ERR_ARG, "str is NULL");
    /* memchr stops at the first NUL (C11 7.24.5.1): the bound only caps an unterminated scan. */
    end = SRNG_CAST(const char *, memchr(str, 0, p->s.max_message + 1u));
    if (end == SRNG_NULL)
        return srng_explain(SHARED_RING_ERR_TOO_BIG,
                            "the string is longer than max_message %u (no 0 in its first %u "
                            "bytes)",
                            p->s.max_message, SRNG_CAST(uint64_t, p->s.max_message) + 1u, 0);
    return srng_write_copy(p, str, SRNG_CAST(size_t, end - str), timeout_ns);
}

SHARED_RING_API int shared_ring_cork(shared_ring_producer *p) {
    int r = srng_producer_ok(p);
    if (r != SHARED_RING_OK) return r;
    if (p->cork_depth == UINT32_MAX)
        return srng_refuse(SHARED_RING_ERR_STATE, "corked 2^32-1 deep already");
    p->cork_depth++;
    srng_end_direct(p);
    return SHARED_RING_OK;
}

SHARED_RING_API int shared_ring_uncork(shared_ring_producer *p) {
    int r = srng_producer_ok(p);
    if (r != SHARED_RING_OK) return r;
    if (p->cork_depth == 0) return srng_refuse(SHARED_RING_ERR_STATE, "uncork without a cork");
    if (--p->cork_depth == 0) {
        srng_publish(p);
        srng_update_direct(p); /* also when there was nothing to publish */
    }
    return SHARED_RING_OK;
}

/* flush and close check the corrupt flag at once: not per-message, so reading its line is fine. */
static int srng_check_corrupt_flag(shared_ring_producer *p) {
    if (SRNG_LOAD(srng_u32_at(p->s.region, SRNG_OFF_CORRUPT), relaxed) == 0u) return SHARED_RING_OK;
    p->s.broken = 1;
    srng_update_open(p);
    return srng_refuse(SHARED_RING_ERR_CORRUPT, "the consumer flagged the ring corrupt");
}

SHARED_RING_API int shared_ring_flush(shared_ring_producer *p) {
    int r = srng_producer_ok(p);
    if (r == SHARED_RING_OK) r = srng_check_corrupt_flag(p);
    if (r != SHARED_RING_OK) return r;
    srng_publish(p);
    return SHARED_RING_OK;
}

SHARED_RING_API int shared_ring_close(shared_ring_producer *p) {
    int r = srng_write_gate(p);
    if (r == SHARED_RING_CLOSED) return SHARED_RING_OK; /* idempotent */
    if (r == SHARED_RING_OK) r = srng_foreign(&p->s);
    if (r == SHARED_RING_OK) r = srng_check_corrupt_flag(p);
    if (r != SHARED_RING_OK) return r;
    srng_publish(p);
    p->closed = 1;
    srng_update_open(p);
    SRNG_STORE(srng_u32_at(p->s.region, SRNG_OFF_CLOSED), 1u, release);
    SRNG_SCHED_POINT("store closed");
    srng_wake_if_sleeping(&p->s, srng_u32_at(p->s.region, SRNG_OFF_CONSUMER_SLEEPING));
    return SHARED_RING_OK;
}

/* ---- consumer ------------------------------------------------------------ */

SRNG_INLINE int srng_consumer_ok(const shared_ring_consumer *c) {
    if (SRNG_LIKELY(c != SRNG_NULL) && SRNG_LIKELY(c->s.open == SRNG_CONSUMER_MAGIC))
        return SHARED_RING_OK;
    return srng_refusal(c != SRNG_NULL ? &c->s : SRNG_NULL, SRNG_CONSUMER_MAGIC);
}

static int srng_corrupt(shared_ring_consumer *c) {
    c->s.broken = 1;
    c->s.open = 0;
    /* Tell the producer (the word is in our own block) and wake it: it re-checks on waking. */
    SRNG_STORE(srng_u32_at(c->s.region, SRNG_OFF_CORRUPT), 1u, relaxed);
    SRNG_FENCE();
    srng_wake_sleeper(&c->s, srng_u32_at(c->s.region, SRNG_OFF_PRODUCER_SLEEPING));
    return srng_explain(SHARED_RING_ERR_CORRUPT,
                        "the region is corrupt: what it holds at position %u (read_pos %u) "
                        "no producer writes",
                        c->peek_pos, c->read_pos, 0);
}

/* Is a message at peek_pos? Steps over published padding. 1 = yes, 0 = not yet, or ERR_CORRUPT.
   The record must end within one capacity of read_pos: no producer can have written further. */
static int srng_message_ready(shared_ring_consumer *c) {
    uint64_t next_line = (c->peek_pos & c->s.mask) + 64u;
    int i;
    /* Called in a waiting consumer's spin. A 64-byte message's record spans two cache lines:
       fetch the second while looking at the first so both arrive together (without it a 64-byte
       ping-pong's one-way p50 is 1.13x). Only while the last message a look found was at most
       64 bytes: in a stream of larger ones the next line is payload the producer is still
       writing, and each fetch takes it from under the producer (between threads, trailing off,
       256 B - 1 KiB: 7% more messages a second without it). A hint never faults; the address
       stays in the data area anyway. */
    if (!c->found_large) SRNG_PREFETCH(c->s.data + (next_line < c->s.capacity ? next_line : 0u));
    /* at most padding, then a filler, then a message: neither follows its own kind */
    for (i = 0; i < 3; i++) {
        uint32_t len;
        uint64_t rec = srng_record_at(&c->s, c->peek_pos, &len);
        if (rec == 0) return 0;
        if (rec == SRNG_REC_BAD || rec > c->read_pos + c->s.capacity - c->peek_pos)
            return srng_corrupt(c);
        if (len <= c->s.max_message) {
            c->found_large = len > 64u;
            return 1;
        }
        c->peek_pos += rec;
    }
    return srng_corrupt(c);
}

/* No record at peek_pos (slow path). The producer stores write_pos after each published header and
   `closed` after its last publish, so reading them (acquire), then peek_pos again, tells "empty"
   from "closed" from "corrupt" (write_pos says a record is where none is). write_pos is stored per
   message, so a `thorough` 0 look (polling read_some, spinning wait) reads only `closed`, in a
   block written once. Returns 1 (a message came after all), 0, CLOSED or ERR_CORRUPT. */
static int srng_check_empty(shared_ring_consumer *c, int thorough) {
    uint32_t closed = SRNG_LOAD(srng_u32_at(c->s.region, SRNG_OFF_CLOSED), acquire);
    uint64_t w;
    int r;
    SRNG_SCHED_POINT("load closed");
    if (!thorough && closed == 0u) return 0;
    w = SRNG_LOAD(srng_u64_at(c->s.region, SRNG_OFF_WRITE_POS), acquire);
    if ((w & 7u) != 0 || srng_is_past(c->write_cache, w) ||
        (srng_is_past(w, c->peek_pos) && w - c->read_pos > c->s.capacity))
        return srng_corrupt(c);
    c->write_cache = w;
    r = srng_message_ready(c);
    if (r != 0) return r;
    if (srng_is_past(w, c->peek_pos)) return srng_corrupt(c);
    if (closed == 0u) return 0;
    /* The stream's end reached a consumer: prepare may format the ring now. */
    if (SRNG_LOAD(srng_u32_at(c->s.region, SRNG_OFF_CLOSE_SEEN), relaxed) == 0u)
        SRNG_STORE(srng_u32_at(c->s.region, SRNG_OFF_CLOSE_SEEN), 1u, relaxed);
    return srng_refuse(SHARED_RING_CLOSED, "the producer closed the stream, and all of it was read");
}

/* Is a message (or the end of the stream) there? 1 = data, 0 = no, CLOSED, ERR_CORRUPT. */
static int srng_data_ready(void *ctx, int thorough) {
    shared_ring_consumer *c = SRNG_CAST(shared_ring_consumer *, ctx);
    int r = srng_message_ready(c);
    return r != 0 ? r : srng_check_empty(c, thorough);
}

/* Hand the published messages within `most` bytes of peek_pos to fn (SRNG_NO_LIMIT: all), until it
   asks to stop; count them and the bytes per batch. srng_scan takes the common records; the others get
   the closer look here, from the header word it loaded. Every bound is a distance from pos, never
   a comparison of two positions: a hostile region may start its counters near 2^64, where one
   wraps before the other. Returns the count or ERR_CORRUPT. */
static int srng_deliver(shared_ring_consumer *c, shared_ring_read_fn fn, void *user, uint64_t most) {
    unsigned char *const data = c->s.data;
    const uint64_t cap = c->s.capacity, max = c->s.max_message, limit = c->read_pos + cap;
    /* Stop after INT_MAX records (each >= 8 bytes), or `most` bytes (a trailing read's end, or what
       is left of an INT_MAX count): a distance, never a position that could wrap to a sentinel */
    const uint64_t count_end = c->peek_pos + srng_at_most(most, 8u * SRNG_CAST(uint64_t, INT_MAX));
    srng_reading r;
    int bad = 0;
    r.pos = c->peek_pos;
    r.off = r.pos & c->s.mask;
    r.left = 0; /* the first record gets the closer look */
    r.bytes = 0;
    r.largest = c->s.stats.largest;
    r.count = 0;
    srng_enter_callback(&c->s);
    while (srng_scan(data, c->s.max_message, &r, fn, user) == SRNG_SCAN_OTHER) {
        /* pos stays within a capacity of read_pos, before count_end: these are true distances */
        const uint32_t len = SRNG_CAST(uint32_t, r.header);
        const uint64_t to_lap_end = cap - r.off, to_limit = limit - r.pos;
        const uint64_t to_count_end = count_end - r.pos;
        const uint64_t room = srng_at_most(to_lap_end, to_limit);
        uint64_t rec = srng_record_size(len);
        unsigned char *payload = data + r.off + SRNG_REC_HEADER;
        if (len > max && SRNG_IS_FILL(len)) {
            /* A filler: its aligned record follows in the same lap. */
            rec = SRNG_FILL_SIZE(len);
            if (rec >= to_lap_end || rec > to_limit) {
                bad = 1;
                break;
            }
            if (rec > to_count_end) break;
            r.pos += rec;
            r.off += rec;
            r.left = srng_at_most(room, to_count_end) - rec; /* its record: the quick check */
            continue;
        }
        if (len > max) {
            /* Only padding may be longer (checked as in srng_record_at). Like any record it is
               passed only within count_end (else `left` would wrap): a trailing read's end inside
               the padding stops here, and the next call goes on. */
            if (len != SRNG_PAD_LEN || r.off == 0 || to_lap_end > to_limit ||
                to_lap_end >= srng_pad_bound(&c->s)) {
                bad = 1;
                break;
            }
            if (to_lap_end > to_count_end) break;
            r.pos += to_lap_end;
            r.off = 0;
            r.left = 0;
            continue;
        }
        if (rec > room) {
            bad = 1;
            break;
        }
        if (rec > to_count_end) break; /* INT_MAX messages or `end`: the rest next call */
        r.left = srng_at_most(room, to_count_end);
        if (rec == to_lap_end) {
            /* The lap's last record: the next one is at offset 0 (unsigned wrap), and gets the
               closer look (left 0). */
            r.off -= cap;
            r.left = rec;
        }
        if (srng_hand_over(&r, payload, rec, len, fn, user) != 0) break;
    }
    srng_leave_callback(&c->s, SRNG_CONSUMER_MAGIC); /* callers passed the gate */
    c->peek_pos = r.pos;
    c->s.stats.messages += SRNG_CAST(uint64_t, r.count);
    c->s.stats.bytes += r.bytes;
    c->s.stats.largest = r.largest;
    return bad ? srng_corrupt(c) : r.count;
}

/* The one place a consumer call reports its producer's departure, only after a look at records
   and closed flag made once it was known: a producer that published or closed, then left between
   the caller's first look and the news, is never reported gone before what it left is read.
   Returns what that look found (1: a message, CLOSED, ERR_CORRUPT), else PEER_GONE (told). */
static int srng_report_departure(shared_ring_consumer *c) {
    int r = srng_data_ready(c, 1);
    return r != 0 ? r : srng_tell_gone(&c->s);
}

/* What a call that may not wait says when no message is there: EMPTY, or PEER_GONE once the
   producer left or a wait found its process dead (until a new producer attaches). */
static int srng_nothing_now(shared_ring_consumer *c) {
    int r;
    if (!srng_peer_left(&c->s)) return srng_refuse(SHARED_RING_EMPTY, "no message now");
    r = srng_report_departure(c);
    return r == 1 ? srng_refuse(SHARED_RING_EMPTY, "no message now") : r; /* there next call */
}

/* read_some's work, stopping `most` bytes past peek_pos (SRNG_NO_LIMIT: at the last published
   record). A bound cutting even the first record (a hostile write_pos) is dropped: a read that found
   a message never says EMPTY. */
SRNG_INLINE int srng_read_upto(shared_ring_consumer *c, shared_ring_read_fn fn, void *user,
                               uint64_t most) {
    int r = srng_deliver(c, fn, user, most);
    if (r == 0 && most != SRNG_NO_LIMIT) r = srng_deliver(c, fn, user, SRNG_NO_LIMIT);
    if (r == 0) {
        r = srng_check_empty(c, 0);
        if (r == 1) r = srng_deliver(c, fn, user, SRNG_NO_LIMIT);
    }
    /* Release what peek handed out too, even when nothing new came. */
    c->peeked = 0;
    srng_release_to(c, c->peek_pos);
    return r != 0 ? r : srng_nothing_now(c);
}

SHARED_RING_API int(shared_ring_read_some)(shared_ring_consumer *c, shared_ring_read_fn fn,
                                          void *user) {
    int r = srng_consumer_ok(c);
    if (r != SHARED_RING_OK) return r;
    if (fn == SRNG_NULL) return srng_refuse(SHARED_RING_ERR_ARG, "fn is NULL");
    return srng_read_upto(c, fn, user, SRNG_NO_LIMIT);
}

#ifdef SRNG_FAST_PATH
/* The fast path stopped at a record it leaves to us (padding, the lap's last record, one to
   refuse) after delivering `delivered` messages: go on in the same call, as read_some (or, if
   `blocking`, read) would have, so the caller sees one count (or ERR_CORRUPT) for the whole call.
   None at all (only padding so far): the whole call, in which a blocking read waits. */
SHARED_RING_API int srng_read_rest(shared_ring_consumer *c, shared_ring_read_fn fn, void *user,
                                   int delivered, int blocking, uint64_t timeout_ns) {
    int r = srng_deliver(c, fn, user, 8u * SRNG_CAST(uint64_t, INT_MAX - delivered));
    /* Before any release: a read that then times out has released nothing, peeked ones neither */
    if (delivered == 0 && r == 0) return srng_read_out_of_line(c, fn, user, blocking, timeout_ns);
    c->peeked = 0;
    srng_release_to(c, c->peek_pos);
    return r < 0 ? r : delivered + r;
}
#endif

SHARED_RING_API int shared_ring_wait(shared_ring_consumer *c, uint64_t timeout_ns) {
    int r = srng_consumer_ok(c);
    if (r == SHARED_RING_OK) r = srng_same_ring(&c->s);
    if (r != SHARED_RING_OK) return r;
    r = srng_block(&c->s, srng_u32_at(c->s.region, SRNG_OFF_CONSUMER_SLEEPING),
                   srng_u32_at(c->s.region, SRNG_OFF_PRODUCER_SLEEPING), srng_data_ready, c,
                   timeout_ns);
    if (r == SHARED_RING_TIMEOUT && timeout_ns == 0) return srng_nothing_now(c); /* not now */
    return r == 1 ? SHARED_RING_OK : r;
}

/* ---- trailing a dense stream ----------------------------------------------
   Why: section 4, "Trailing". shared_ring_read notes each wait (srng_note_wait); while trailing
   it holds off (srng_hold_off) and reads up to where write_pos was. write_pos is read only every
   8th clock look: the producer stores it per message, and each read costs it a cache miss. A
   hold-off that found enough messages resets the trial count, so a rare hiccup in a dense stream
   does not push the next trial out to 4096 quick waits. The run of quick waits before a trial is
   timed (two clock reads a run): the rate right behind the producer that a hold-off must beat. */

/* write_pos, for the producer's rate only: a hostile value sways only whether reads trail. */
static uint64_t srng_write_pos_hint(const shared_ring_consumer *c) {
    return SRNG_LOAD(srng_u64_at(c->s.region, SRNG_OFF_WRITE_POS), acquire);
}

/* A wait within trail_ns counts toward a trial of trailing; a longer one (any, if trail_ns is 0)
   means sparse; none (data was there) means we are behind, which trailing would not help. */
static void srng_note_wait(shared_ring_consumer *c, uint64_t waits, uint64_t wait_ns) {
    if (c->s.stats.waits == waits) return;
    if (c->s.stats.wait_ns - wait_ns >= c->trail_ns) {
        c->quick_waits = 0;
        return;
    }
    if (c->quick_waits++ == 0) {
        c->run_ns = SHARED_RING_NOW_NS();
        c->run_pos = srng_write_pos_hint(c);
    }
    if (c->quick_waits < c->trial_gap) return;
    c->quick_waits = 0;
    c->trailing = 1;
    c->behind_ns = SHARED_RING_NOW_NS() - c->run_ns;
    c->behind_bytes = srng_write_pos_hint(c) - c->run_pos;
    c->s.stats.trails++;
}

/* What a hold-off saw. */
typedef struct srng_hold {
    int ahead;          /* the producer got SRNG_TRAIL_BYTES (or capacity/4) past us */
    uint64_t ns;        /* how long it held off */
    uint64_t published; /* how far write_pos moved meanwhile */
} srng_hold;

/* The producer's publish rate while we held off, against the run right behind it before the
   trial. SRNG_FASTER (>= 5/4): our reading held it back; trailing pays. SRNG_PACED (4/5..5/4):
   it sets the pace either way; trailing only adds latency. SRNG_SLOWER: it paused meanwhile,
   which tells nothing. Operands are capped so the products fit. */
enum { SRNG_SLOWER, SRNG_PACED, SRNG_FASTER };
static int srng_held_rate(const shared_ring_consumer *c, const srng_hold *h) {
    const uint64_t most_bytes = SRNG_CAST(uint64_t, 1) << 28;
    const uint64_t most_ns = SRNG_CAST(uint64_t, 1) << 32;
    uint64_t held = srng_at_most(h->published, most_bytes) * srng_at_most(c->behind_ns, most_ns);
    uint64_t behind = srng_at_most(c->behind_bytes, most_bytes) * srng_at_most(h->ns, most_ns);
    if (4u * held >= 5u * behind) return SRNG_FASTER;
    return 5u * held >= 4u * behind ? SRNG_PACED : SRNG_SLOWER;
}

/* Spin until the producer has published SRNG_TRAIL_BYTES (or capacity/4 if less) past peek_pos,
   or `ns` passed; fills *h. Returns how far past peek_pos to read (to write_pos: every record
   before it is published), or SRNG_NO_LIMIT: write_pos comes from the region, and a value not past
   peek_pos or beyond a capacity from read_pos bounds nothing. */
static uint64_t srng_hold_off(shared_ring_consumer *c, uint64_t ns, srng_hold *h) {
    const uint64_t want = srng_at_most(c->s.capacity / 4u, SRNG_TRAIL_BYTES);
    uint64_t start = SHARED_RING_NOW_NS(), now = start, w = 0, first = 0;
    uint32_t looks, still = 0;
    h->ahead = 0;
    for (looks = 0;; looks++) {
        uint64_t then = now;
        int i, last;
        now = SHARED_RING_NOW_NS();
        still = now == then ? still + 1u : 0u;
        last = now - start >= ns || still == SRNG_HOLD_STILL_MAX;
        if (last || looks % SRNG_HOLD_LOOK_EVERY == 0) {
            w = srng_write_pos_hint(c);
            if (looks == 0) first = w;
            if (srng_is_past(w, c->peek_pos) && w - c->peek_pos >= want) {
                h->ahead = 1;
                break;
            }
        }
        if (last) break;
        for (i = 0; i < SRNG_HOLD_PAUSES; i++) srng_cpu_relax();
    }
    h->ns = now - start;
    h->published = w - first;
    return srng_is_past(w, c->peek_pos) && w - c->read_pos <= c->s.capacity ? w - c->peek_pos
                                                                             : SRNG_NO_LIMIT;
}

/* Back to reading right behind; the next trial takes twice as many quick waits. */
static void srng_stop_trailing(shared_ring_consumer *c) {
    c->trailing = 0;
    c->slow_holds = 0;
    if (c->trial_gap < SRNG_TRIAL_LAST) c->trial_gap *= 2u;
}

/* After a hold-off `h` and a read of `count` messages: go on trailing, or stop if the stream
   turned out sparse, or paced by the producer (twice, with no faster hold-off between). */
static void srng_judge_hold_off(shared_ring_consumer *c, const srng_hold *h, int count) {
    int rate = h->ahead ? SRNG_FASTER : srng_held_rate(c, h);
    /* Sparse: few messages and few bytes. Bytes too, or a dense stream of large messages (2 us
       holds fewer than 16 of 768 bytes) would read right behind the producer, each line crossing
       twice (make peers, band: 0.57-0.83x Aeron's ring at 768 B - 2 KiB). */
    if (count < 0 || (!h->ahead && count < SRNG_TRAIL_MIN && h->published < SRNG_TRAIL_MIN_BYTES)) {
        srng_stop_trailing(c);
    } else if (rate == SRNG_FASTER) {
        c->slow_holds = 0;
        c->trial_gap = SRNG_TRIAL_FIRST; /* dense: a hiccup later costs little */
    } else if (rate == SRNG_PACED && ++c->slow_holds >= SRNG_SLOW_HOLDS) {
        srng_stop_trailing(c); /* paced: twice now */
    }
}

/* A read while trailing: hold off, read up to where the producer was, judge the hold-off. */
static int srng_read_trailing(shared_ring_consumer *c, shared_ring_read_fn fn, void *user,
                              uint64_t timeout_ns) {
    srng_hold h;
    uint64_t most = srng_hold_off(c, srng_at_most(timeout_ns, c->trail_ns), &h);
    int r = srng_read_upto(c, fn, user, most);
    srng_judge_hold_off(c, &h, r); /* a negative r counts as sparse */
    return r;
}

SHARED_RING_API int(shared_ring_read)(shared_ring_consumer *c, shared_ring_read_fn fn, void *user,
                                      uint64_t timeout_ns) {
    uint64_t waits, wait_ns, left;
    int r = srng_consumer_ok(c);
    if (r != SHARED_RING_OK) return r;
    if (fn == SRNG_NULL) return srng_refuse(SHARED_RING_ERR_ARG, "fn is NULL");
    waits = c->s.stats.waits;
    wait_ns = c->s.stats.wait_ns;
    r = shared_ring_wait(c, timeout_ns);
    if (r != SHARED_RING_OK) {
        c->quick_waits = 0; /* a wait that found nothing ends a run of quick ones */
        return r;
    }
    srng_note_wait(c, waits, wait_ns);
    /* what the wait left of the timeout: a hold-off never takes the read past it */
    left = timeout_ns - srng_at_most(c->s.stats.wait_ns - wait_ns, timeout_ns);
    if (c->trailing && left != 0)
        r = srng_read_trailing(c, fn, user, left);
    else
        r = srng_read_upto(c, fn, user, SRNG_NO_LIMIT);
    /* The wait saw a record, which no producer takes back: EMPTY now means the region was
       written under us (corrupt). */
    return r == SHARED_RING_EMPTY ? srng_corrupt(c) : r;
}

/* A read callback that keeps the one message it is given and stops. */
static int srng_take_one(void *user, const void *data, size_t len) {
    shared_ring_message *msg = SRNG_CAST(shared_ring_message *, user);
    msg->data = data;
    msg->len = len;
    return 1;
}

SHARED_RING_API int shared_ring_peek(shared_ring_consumer *c, shared_ring_message *msg) {
    int r = srng_consumer_ok(c);
    if (msg != SRNG_NULL) memset(msg, 0, sizeof *msg); /* written on every path */
    if (r != SHARED_RING_OK) return r;
    if (msg == SRNG_NULL) return srng_refuse(SHARED_RING_ERR_ARG, "msg is NULL");
    r = srng_data_ready(c, 0);
    if (r == 0) return srng_nothing_now(c);
    if (r < 0) return r;
    r = srng_deliver(c, srng_take_one, msg, SRNG_NO_LIMIT);
    if (r < 0) return r;
    if (r == 0) return srng_nothing_now(c);
    c->peeked++;
    return SHARED_RING_OK;
}

SHARED_RING_API int shared_ring_arm(shared_ring_consumer *c) {
    srng_au32 *word, *peer;
    uint64_t id;
    uint32_t mode, held;
    int r = srng_consumer_ok(c);
    if (r != SHARED_RING_OK) return r;
    if (c->s.wake == SRNG_NULL) /* the producer could not reach us */
        return srng_refuse(SHARED_RING_ERR_STATE,
                           "arm needs wait and wake hooks: attach both sides with them");
    r = srng_same_ring(&c->s);
    if (r != SHARED_RING_OK) return r;
    r = srng_data_ready(c, 1);
    if (r != 0) return r;
    /* A dead producer will never signal the loop's descriptor: say so,
       once; after that arm for the next producer, whose attach wakes us. */
    r = srng_watch_peer(&c->s, SHARED_RING_NOW_NS());
    if (r < 0) return r;
    SRNG_SCHED_POINT("arm: watched");
    if (c->s.peer_gone && !c->s.gone_told) return srng_report_departure(c);
    /* A producer attached without hooks makes no wake-up that reaches the loop. (None attached:
       the next one's attach wakes the loop if it has hooks.) */
    mode = SRNG_LOAD(srng_u32_at(c->s.region, SRNG_OFF_PRODUCER_WAIT_MODE), relaxed);
    if ((mode & SRNG_MODE_HELD) != 0u && (mode & SRNG_WAKES(SRNG_SLEEPS_HOOK)) == 0u)
        return srng_refuse(SHARED_RING_ERR_STATE,
                           "the producer makes no hook wake-up: attach it with wait and wake hooks too");
    /* srng_block's announce / barrier / re-check, without the sleep (the caller's loop sleeps). */
    word = srng_u32_at(c->s.region, SRNG_OFF_CONSUMER_SLEEPING);
    peer = srng_u32_at(c->s.region, SRNG_OFF_PRODUCER_SLEEPING);
    if (!srng_announce_sleep(&c->s, word, peer)) {
        /* No wake-up promised (the producer has yet to choose for us, or membarrier failed):
           nap a slice, then say "ready" so the loop looks again, polling an idle producer at that
           pace instead of spinning; the word keeps asking the producer to choose. */
        srng_withdraw(&c->s, word, peer);
        srng_nap(SRNG_SLICE_NS);
        return 1;
    }
    r = srng_data_ready(c, 1);
    /* srng_block's last look: a producer that came or left since our watch says so next call */
    if (r == 0 && srng_side_news(&c->s, SRNG_OFF_PRODUCER_ID, &id, &held) != 0) r = 1;
    if (r != 0) srng_withdraw(&c->s, word, peer);
    return r;
}

SHARED_RING_API int shared_ring_consumer_peer_fd(shared_ring_consumer *c) {
    int r = srng_consumer_ok(c);
    return r != SHARED_RING_OK ? r : srng_peer_fd(&c->s);
}

SHARED_RING_API int shared_ring_producer_peer_fd(shared_ring_producer *p) {
    int r = srng_producer_ok(p);
    return r != SHARED_RING_OK ? r : srng_peer_fd(&p->s);
}

SHARED_RING_API int shared_ring_release(shared_ring_consumer *c) {
    int released, r = srng_consumer_ok(c);
    /* Releasing what was already handed out stays allowed on a broken ring. */
    if (r != SHARED_RING_OK && r != SHARED_RING_ERR_CORRUPT) return r;
    released = c->peeked > INT_MAX ? INT_MAX : SRNG_CAST(int, c->peeked);
    c->peeked = 0;
    srng_release_to(c, c->peek_pos);
    return released;
}

/* ---- waiting on many rings ------------------------------------------------- */

/* A set of rings and where its next look starts: after the ring reported last, so every ready
   ring is served in turn (the cursor is kept in the first handle between calls). */
typedef struct srng_set {
    shared_ring_consumer *const *rings;
    size_t n, from;
    shared_ring_side *first; /* the first handle: its options, its cursor */
} srng_set;

/* Returns the first ring from the cursor on, round the set, with something to report (a message,
   closed, corrupt, or its producer gone); EMPTY if none; ERR_HANDLE / ERR_STATE for an entry that
   is no attached consumer / is inside a callback. Each handle is checked as reached, so a call
   costs what it looks at, not the set's size; an idle set was looked at whole before any sleep. */
static int srng_any_ready(const srng_set *set, int thorough) {
    size_t k, i = set->from;
    for (k = 0; k < set->n; k++, i++) {
        shared_ring_consumer *c;
        if (i == set->n) i = 0;
        c = set->rings[i];
        if (c == SRNG_NULL) continue;
        if (c->s.magic != SRNG_CONSUMER_MAGIC)
            return srng_explain(SHARED_RING_ERR_HANDLE, "rings[%u] is not an attached consumer",
                                i, 0, 0);
        if (c->s.busy)
            return srng_explain(SHARED_RING_ERR_STATE,
                                "rings[%u] is inside its own callback (called from there?)", i, 0,
                                0);
        if (c->s.broken || (thorough && srng_same_ring(&c->s) != SHARED_RING_OK) ||
            srng_data_ready(c, thorough) != 0 || (c->s.peer_gone && !c->s.gone_told))
            return SRNG_CAST(int, i);
    }
    return srng_refuse(SHARED_RING_EMPTY, "no ring of the set has a message now");
}

/* srng_any_ready as srng_spin's srng_ready_fn: index + 1, or 0 (set checked whole first). */
static int srng_set_ready(void *ctx, int thorough) {
    int r = srng_any_ready(SRNG_CAST(const srng_set *, ctx), thorough);
    return r >= 0 ? r + 1 : 0;
}

/* futex_waitv's deadline comes from the kernel's 64-bit clock call (srng_waitv); the libc clock's
   condition stays for the CLOCK_MONOTONIC its headers declare. */
#if SRNG_OS_SLEEP == SRNG_SLEEPS_FUTEX && defined(SYS_futex_waitv) && \
    defined(SRNG_HAVE_CLOCK_GETTIME) && \
    (defined(SYS_clock_gettime64) || defined(__LP64__) || (defined(__x86_64__) && defined(__ILP32__)))
#define SRNG_HAVE_WAITV 1
#endif

/* Does no handle hold the producer's side (its wait_mode word NONE)? */
static int srng_no_producer(const shared_ring_side *s) {
    return (SRNG_LOAD(srng_u32_at(s->region, SRNG_OFF_PRODUCER_WAIT_MODE), relaxed) &
            SRNG_MODE_HELD) == 0u;
}

#if defined(SRNG_HAVE_WAITV) || defined(SRNG_HAVE_BELLS)
/* Do the producer's futex wake-ups reach our sleep? (Not in a wait hook, nor if it makes none.)
   With no producer, its successor's attach wakes us if it can; srng_wait_many looks again within
   SRNG_LIVENESS_NS in case it cannot. */
static int srng_futex_wakes_reach(const shared_ring_side *s) {
    uint32_t mode = SRNG_LOAD(srng_u32_at(s->region, SRNG_OFF_PRODUCER_WAIT_MODE), relaxed);
    return s->wait == SRNG_NULL &&
           ((mode & SRNG_MODE_HELD) == 0u || (mode & SRNG_WAKES(SRNG_SLEEPS_FUTEX)) != 0u);
}
#endif

/* Announce (`on` 0: withdraw) every consumer of the set as asleep. Returns 0 when any ring has
   no wake-up promised (as srng_announce_sleep); one membarrier covers all producers in-process. */
static int srng_announce_many(shared_ring_consumer *const *rings, size_t n, int on) {
    size_t i;
    int promised = 1, barrier = 0;
    for (i = 0; i < n; i++) {
        srng_au32 *word;
        if (rings[i] == SRNG_NULL) continue;
        word = srng_u32_at(rings[i]->s.region, SRNG_OFF_CONSUMER_SLEEPING);
        if (on)
            SRNG_STORE(word, 1u, release);
        else
            srng_withdraw(&rings[i]->s, word,
                          srng_u32_at(rings[i]->s.region, SRNG_OFF_PRODUCER_SLEEPING));
    }
    if (!on) return 1;
    SRNG_FENCE();
    for (i = 0; i < n; i++) {
        if (rings[i] == SRNG_NULL) continue;
        /* as srng_announce_sleep, but one membarrier for all */
        switch (srng_promise(&rings[i]->s, srng_u32_at(rings[i]->s.region,
                                                       SRNG_OFF_PRODUCER_SLEEPING))) {
        case SRNG_PROMISED: break;
        case SRNG_PROMISED_BY_BARRIER: barrier = 1; break;
        default: promised = 0;
        }
    }
    return promised && (!barrier || srng_process_barrier());
}

#ifdef SRNG_HAVE_WAITV
#define SRNG_WAITV_MAX 128u /* the kernel's limit */
#ifdef SYS_clock_gettime64 /* 32-bit targets: the call with 64-bit fields */
#define SRNG_SYS_CLOCK64 SYS_clock_gettime64
#else /* 64-bit targets and x32, whose kernel clock fields are 64 bits */
#define SRNG_SYS_CLOCK64 SYS_clock_gettime
#endif
static srng_au32 srng_no_waitv; /* 1: futex_waitv or the kernel's clock call refused (before
                                   Linux 5.16, a 32-bit kernel before 5.1, seccomp) */

/* May one futex_waitv call watch a set of n rings? */
static int srng_waitv_covers(size_t n) {
    return n <= SRNG_WAITV_MAX && SRNG_LOAD(&srng_no_waitv, relaxed) == 0u;
}

/* Sleep on every consumer's sleeping word at once (Linux 5.16+; the producers' futex wake-ups
   reach it). Returns 1 slept, 0 not possible here (older kernel, the clock call refused, a ring
   whose producer makes no futex wake-ups, a wait hook, too many rings), -1 the call failed. */
static int srng_waitv(shared_ring_consumer *const *rings, size_t n, uint64_t left) {
    struct {
        uint64_t val, uaddr;
        uint32_t flags, reserved;
    } w[SRNG_WAITV_MAX];
    struct {
        int64_t sec, nsec;
    } until;
    unsigned k = 0;
    size_t i;
    long r;
    if (!srng_waitv_covers(n)) return 0;
    for (i = 0; i < n; i++) {
        shared_ring_side *s = rings[i] != SRNG_NULL ? &rings[i]->s : SRNG_NULL;
        if (s == SRNG_NULL) continue;
        if (!srng_futex_wakes_reach(s)) return 0;
        w[k].val = 1u;
        w[k].uaddr = SRNG_PUN(uintptr_t, srng_u32_at(s->region, SRNG_OFF_CONSUMER_SLEEPING));
        w[k].flags = 2u; /* FUTEX2_SIZE_U32, shared between processes */
        w[k].reserved = 0u;
        k++;
    }
    /* Its timeout is absolute, on the kernel's CLOCK_MONOTONIC, with 64-bit fields on every
       target: so "now" is the kernel's too, not libc's clock_gettime, which a faked or frozen clock
       (libfaketime, a broken vDSO) can put hours ahead, a sleep that long. */
    if (SRNG_SYSCALL(SRNG_SYS_CLOCK64, CLOCK_MONOTONIC, SRNG_CAST(void *, &until)) != 0) {
        SRNG_STORE(&srng_no_waitv, 1u, relaxed); /* refused (seccomp, a 32-bit kernel before 5.1) */
        return 0;                                /* for good: the doorbell or slices from now on */
    }
    if (left > 3600000000000u) left = 3600000000000u; /* an hour; the caller loops */
    until.sec += SRNG_CAST(int64_t, left / 1000000000u);
    until.nsec += SRNG_CAST(int64_t, left % 1000000000u);
    if (until.nsec >= 1000000000) {
        until.sec++;
        until.nsec -= 1000000000;
    }
    r = SRNG_SYSCALL(SYS_futex_waitv, SRNG_CAST(void *, w), k, 0, &until, CLOCK_MONOTONIC);
    if (r == -1 && errno == ENOSYS) {
        SRNG_STORE(&srng_no_waitv, 1u, relaxed);
        return 0;
    }
    return srng_futex_result(r) == 0 ? 1 : -1;
}
#endif

#ifdef SRNG_HAVE_BELLS
#ifndef SRNG_HAVE_WAITV
static int srng_waitv_covers(size_t n) {
    (void)n;
    return 0;
}
#endif

/* Name a doorbell (or, with 0, none) beside each ring's sleeping word. */
static void srng_name_bell(shared_ring_consumer *const *rings, size_t n, uint32_t bell) {
    size_t i;
    for (i = 0; i < n; i++)
        if (rings[i] != SRNG_NULL)
            SRNG_STORE(srng_u32_at(rings[i]->s.region, SRNG_OFF_CONSUMER_BELL), bell, relaxed);
}
#endif

/* A doorbell for a set one futex_waitv cannot watch, when every ring's producer runs in this
   process, wakes by futex and rings this copy's table (no other bump would reach it); named beside
   each ring's sleeping word before the set announces itself asleep. 0: none (sleep in slices). */
static uint32_t srng_take_bell(shared_ring_consumer *const *rings, size_t n) {
#if defined(SRNG_HAVE_BELLS) && defined(SRNG_HAVE_IDENTITY)
    uint32_t bell;
    uint64_t mine, here = 0;
    size_t i;
    if (srng_waitv_covers(n)) return 0u;
    mine = srng_my_word();
    for (i = 0; i < n; i++) {
        const unsigned char *region;
        if (rings[i] == SRNG_NULL || srng_no_producer(&rings[i]->s)) continue; /* 50 ms looks */
        region = rings[i]->s.region;
        if (!srng_futex_wakes_reach(&rings[i]->s) ||
            !srng_held_by(region, SRNG_OFF_PRODUCER_ID, mine, &here) ||
            srng_id_field(region, SRNG_OFF_PRODUCER_BELLS) != srng_bell_table())
            return 0u;
    }
    for (bell = 1u; bell <= SRNG_BELLS; bell++) {
        uint32_t free_bell = 0u;
        if (SRNG_CAS(&srng_bells[bell - 1u].taken, free_bell, 1u)) {
            srng_name_bell(rings, n, bell);
            return bell;
        }
    }
#else
    (void)rings;
    (void)n;
#endif
    return 0u;
}

static void srng_give_back_bell(shared_ring_consumer *const *rings, size_t n, uint32_t bell) {
#ifdef SRNG_HAVE_BELLS
    if (bell == 0u) return;
    srng_name_bell(rings, n, 0u);
    SRNG_STORE(&srng_bells[bell - 1u].taken, 0u, release);
#else
    (void)rings;
    (void)n;
    (void)bell;
#endif
}

/* Read after the announce and before the last look at the rings: a later bump ends the sleep. */
static uint32_t srng_bell_count(uint32_t bell) {
#ifdef SRNG_HAVE_BELLS
    if (bell != 0u) return SRNG_LOAD(&srng_bells[bell - 1u].rung, acquire);
#endif
    (void)bell;
    return 0u;
}

/* One sleep for the whole set, at most `left`: in one futex_waitv call, on
   the set's doorbell (`bell`, whose count was `rung`), or in slices. */
static void srng_sleep_many(shared_ring_consumer *const *rings, size_t n, shared_ring_side *first,
                            uint64_t left, uint32_t bell, uint32_t rung) {
    size_t i;
#ifdef SRNG_HAVE_BELLS
    if (bell != 0u) {
        for (i = 0; i < n; i++)
            if (rings[i] != SRNG_NULL) rings[i]->s.stats.sleeps++;
        if (srng_os_wait(&srng_bells[bell - 1u].rung, rung, left) != 0) {
            first->stats.wait_failures++;
            srng_nap(SRNG_SLICE_NS);
        }
        return;
    }
#else
    (void)bell;
    (void)rung;
#endif
#ifdef SRNG_HAVE_WAITV
    {
        int r = srng_waitv(rings, n, left);
        if (r != 0) {
            for (i = 0; i < n; i++)
                if (rings[i] != SRNG_NULL) rings[i]->s.stats.sleeps++;
            if (r < 0) {
                first->stats.wait_failures++;
                srng_nap(SRNG_SLICE_NS);
            }
            return;
        }
    }
#endif
    /* Else the first ring's word, in slices: a message on another ring is seen within one. */
    for (i = 0; i < n; i++)
        if (rings[i] != SRNG_NULL && &rings[i]->s != first) rings[i]->s.stats.sleeps++;
    srng_sleep(first, srng_u32_at(first->region, SRNG_OFF_CONSUMER_SLEEPING),
               SRNG_LOAD(srng_u32_at(first->region, SRNG_OFF_PRODUCER_WAIT_MODE), relaxed),
               n > 1u && left > SRNG_SLICE_NS ? SRNG_SLICE_NS : left);
}

/* Open a set: its first handle (see srng_set) and where this call's look starts; the other
   handles are checked as srng_any_ready reaches them. */
static int srng_open_set(srng_set *set, shared_ring_consumer *const *rings, size_t n) {
    size_t i;
    set->rings = rings;
    set->n = n;
    set->first = SRNG_NULL;
    if (rings == SRNG_NULL) return srng_refuse(SHARED_RING_ERR_ARG, "rings is NULL");
    if (n == 0 || n > INT_MAX)
        return srng_explain(SHARED_RING_ERR_ARG, "n is %u: it must be 1 to %u", n, INT_MAX, 0);
    for (i = 0; i < n && rings[i] == SRNG_NULL; i++) continue;
    if (i == n) return srng_refuse(SHARED_RING_ERR_ARG, "every entry of rings is NULL");
    if (rings[i]->s.magic != SRNG_CONSUMER_MAGIC)
        return srng_explain(SHARED_RING_ERR_HANDLE, "rings[%u] is not an attached consumer", i, 0,
                            0);
    set->first = &rings[i]->s;
    set->from = rings[i]->next_ready < n ? rings[i]->next_ready : 0u;
    return SHARED_RING_OK;
}

/* Has any ring's producer side news since the set's last watch (srng_side_news)? */
static int srng_any_side_news(shared_ring_consumer *const *rings, size_t n) {
    uint64_t id;
    uint32_t held;
    size_t i;
    for (i = 0; i < n; i++)
        if (rings[i] != SRNG_NULL &&
            srng_side_news(&rings[i]->s, SRNG_OFF_PRODUCER_ID, &id, &held) != 0)
            return 1;
    return 0;
}

/* Index of a ring whose producer is gone, or -1; *look_soon: look again within SRNG_LIVENESS_NS
   (a producer in another process may die; a ring without one may get one whose wake-ups do not
   reach us). */
static int srng_watch_many(shared_ring_consumer *const *rings, size_t n, uint64_t now,
                           int *look_soon) {
    size_t i;
    *look_soon = 0;
    for (i = 0; i < n; i++) {
        int r;
        if (rings[i] == SRNG_NULL) continue;
        r = srng_watch_peer(&rings[i]->s, now);
        if (r < 0 || (rings[i]->s.peer_gone && !rings[i]->s.gone_told)) return SRNG_CAST(int, i);
        *look_soon |= r == 1 || srng_no_producer(&rings[i]->s);
    }
    return -1;
}

/* wait_any's answer: the ring at `at`; the next look starts after it. */
static int srng_served(srng_set *set, int at) {
    shared_ring_consumer *lead = SRNG_PUN(shared_ring_consumer *, set->first);
    if (at >= 0) lead->next_ready = SRNG_CAST(uint32_t, SRNG_CAST(size_t, at) + 1u);
    return at;
}

static int srng_wait_many(srng_set *set, uint64_t timeout_ns);

SHARED_RING_API int shared_ring_wait_any(shared_ring_consumer *const *rings, size_t n,
                                         uint64_t timeout_ns) {
    srng_set set;
    int r = srng_open_set(&set, rings, n);
    if (r != SHARED_RING_OK) return r;
    r = srng_any_ready(&set, 1);
    if (r != SHARED_RING_EMPTY || timeout_ns == 0) return srng_served(&set, r);
    return srng_served(&set, srng_wait_many(&set, timeout_ns));
}

/* wait_any when nothing was ready at once: spin, then sleep. */
static int srng_wait_many(srng_set *set, uint64_t timeout_ns) {
    shared_ring_consumer *const *rings = set->rings;
    shared_ring_side *first = set->first;
    size_t n = set->n;
    uint64_t start = SHARED_RING_NOW_NS(), elapsed = 0;
    int r;
    if (first->spin_now != 0) {
        /* Spin (the first ring's spin budget) looking at every ring, cheaply. */
        r = srng_spin(srng_set_ready, set, start, srng_at_most(first->spin_now, timeout_ns),
                      &first->round_ns, &elapsed);
        if (r > 0) return r - 1;
    }
    for (;;) {
        uint64_t left = SHARED_RING_FOREVER;
        uint32_t bell, rung;
        int look_soon;
        /* before timing out too, as srng_block */
        r = srng_watch_many(rings, n, start + elapsed, &look_soon);
        if (r >= 0) break;
        SRNG_SCHED_POINT("wait_any: watched");
        if (timeout_ns != SHARED_RING_FOREVER) {
            if (elapsed >= timeout_ns) {
                r = srng_refuse(SHARED_RING_TIMEOUT, "no ring had a message within the timeout");
                break;
            }
            left = timeout_ns - elapsed;
        }
        if (look_soon && left > SRNG_LIVENESS_NS) left = SRNG_LIVENESS_NS;
        if (first->recheck_ns != 0 && left > first->recheck_ns) left = first->recheck_ns;
        bell = srng_take_bell(rings, n);
        /* A producer of another process may attach meanwhile: its wake-up
           would not ring our bell, so look again within the liveness time. */
        if (bell != 0u && left > SRNG_LIVENESS_NS) left = SRNG_LIVENESS_NS;
        if (!srng_announce_many(rings, n, 1) && left > SRNG_SLICE_NS) left = SRNG_SLICE_NS;
        rung = srng_bell_count(bell);
        r = srng_any_ready(set, 1);
        if (r == SHARED_RING_EMPTY && srng_any_side_news(rings, n)) {
            srng_give_back_bell(rings, n, bell);
            elapsed = srng_elapsed_after(start, elapsed, 1000u); /* as srng_block */
            continue; /* srng_block's last look: a producer came or left since our watch */
        }
        if (r == SHARED_RING_EMPTY) {
            srng_sleep_many(rings, n, first, left, bell, rung);
            r = srng_any_ready(set, 1);
        }
        srng_give_back_bell(rings, n, bell);
        if (r != SHARED_RING_EMPTY) break;
        elapsed = srng_elapsed_after(start, elapsed, left);
    }
    srng_announce_many(rings, n, 0);
    /* The first ring's spin adapts as in srng_block; any ring that reported counts as found. */
    srng_adapt_spin(first, r >= 0, srng_elapsed_after(start, elapsed, 0));
    return r;
}

/* ---- either side ------------------------------------------------------------ */

/* A detach (of a broken handle too): unless a process other than the attacher calls it (it says
   why), give our identity block back (a side lost is only dropped) and wake a sleeping peer, which
   then finds us gone (the fence: our owner word's store before reading its sleeping word, against
   its announce / fence / look). A producer first publishes what a cork held back. */
static int srng_leave(shared_ring_side *s, uint32_t magic) {
    int r = srng_refusal(s, magic), lost;
    uint64_t mine, holder;
    unsigned id_off;
    if (r != SHARED_RING_OK && r != SHARED_RING_ERR_CORRUPT) return r;
    id_off = srng_own_id(s);
    mine = s->owner; /* before a lost side drops it */
    lost = srng_side_lost(s);
    if (!lost && srng_foreign(s) != SHARED_RING_OK) return SHARED_RING_ERR_HANDLE;
    if (magic == SRNG_PRODUCER_MAGIC && r == SHARED_RING_OK && !lost)
        srng_publish(SRNG_PUN(shared_ring_producer *, s));
    srng_drop_peer_fd(s);
    /* Looked at again next to the move: a take-back may have finished during the publish. The
       word, even if equal to ours, is then another handle's. */
    if (lost || srng_side_lost(s)) s->owner = 0; /* only dropped: the word is another handle's */
    /* HELD -> NONE while our id is the side's latest and no other process holds the side (an
       adopting child, between its move and its announce), though the owner word may be FREE (a
       take-back's word may equal ours and be freed by the handle it took back from): our wake-ups
       leave with us (a peer that trusted them is woken below and sleeps at most SRNG_LIVENESS_NS
       from now on). CAS: a successor's word, whose attach id differs, stays; release: a peer that
       sees NONE sees all we published. */
    holder = srng_id_field(s->region, id_off + SRNG_ID_OWNER);
    if (srng_id_field(s->region, SRNG_OFF_RING_ID) == s->ring_id &&
        srng_id_field(s->region, id_off + SRNG_ID_ATTACH) == s->attach_id &&
        (holder == 0u || srng_same_owner(holder, mine))) {
        srng_au32 *mode = srng_beside(srng_u32_at(s->region, srng_own_sleeping(s)), SRNG_MODE_WORD);
        uint32_t held = srng_held_mode(s);
        SRNG_SCHED_POINT("detach: mode");
        (void)SRNG_CAS(mode, held, 0u);
    }
    srng_release_side(s, s->region, id_off);
    SRNG_FENCE();
    srng_wake_departing(s, srng_u32_at(s->region, srng_peer_sleeping(s)));
    return SHARED_RING_OK;
}

SHARED_RING_API int shared_ring_detach_producer(shared_ring_producer *p) {
    int r = srng_leave(p != SRNG_NULL ? &p->s : SRNG_NULL, SRNG_PRODUCER_MAGIC);
    if (r == SHARED_RING_OK) memset(p, 0, sizeof *p);
    return r;
}

SHARED_RING_API int shared_ring_detach_consumer(shared_ring_consumer *c) {
    int r = srng_leave(c != SRNG_NULL ? &c->s : SRNG_NULL, SRNG_CONSUMER_MAGIC);
    if (r == SHARED_RING_OK) memset(c, 0, sizeof *c);
    return r;
}

/* Our identity in place of the attacher's (the same description's inherited kernel lock stays
   ours), a new attach id so a peer's fenceless choice for the attacher no longer holds, and the
   attach-time announcement again (the peer chooses anew). Past the gate of side `magic`. */
static int srng_adopt(shared_ring_side *s, uint32_t magic) {
    int r = srng_refusal(s, magic);
#ifdef SRNG_HAVE_IDENTITY
    uint64_t mine;
    unsigned id_off;
    if (r != SHARED_RING_OK || srng_foreign(s) == SHARED_RING_OK) return r;
    id_off = srng_own_id(s);
    mine = srng_my_word() | (s->owner & SRNG_OWNER_LOCKED);
    /* lost: the attacher's own word may be back, held by a new attach of the attacher */
    if (srng_side_lost(s) || !srng_owner_move(s->region, id_off, s->owner, mine))
        return srng_refuse(SHARED_RING_ERR_BUSY,
                           "the side is no longer the attaching process's (detached, taken "
                           "over, or adopted)");
    /* After the move: a failed adopt must not overwrite whoever holds the side now. */
    srng_write_identity(s->region, id_off, mine);
    s->owner = mine;
    s->attach_id = srng_next_attach_id(s->region);
    s->barrier_peer = 0; /* choose again, for this process */
    srng_announce_mode(s);
#endif
    return r;
}

SHARED_RING_API int shared_ring_adopt_producer(shared_ring_producer *p) {
    return srng_adopt(p != SRNG_NULL ? &p->s : SRNG_NULL, SRNG_PRODUCER_MAGIC);
}

SHARED_RING_API int shared_ring_adopt_consumer(shared_ring_consumer *c) {
    return srng_adopt(c != SRNG_NULL ? &c->s : SRNG_NULL, SRNG_CONSUMER_MAGIC);
}

/* One side's identity block, as an inspector sees it. */
static void srng_owner_of(const unsigned char *region, unsigned id_off, int own,
                          shared_ring_owner *out, uint32_t *formatting) {
    uint64_t owner = srng_id_field(region, id_off + SRNG_ID_OWNER);
    int held = (owner & SRNG_OWNER_LOCKED) != 0u && srng_file_shows(own, id_off, owner)
                   ? srng_byte_held(own, id_off)
                   : -1;
    out->pid = SRNG_CAST(uint32_t, owner) & SRNG_OWNER_PID;
    if (held < 0 && srng_in_this_process(region, id_off)) held = 1; /* the asker's own */
    if (held != 0 && srng_gone(region, id_off, owner, own, 0)) held = 0;
    out->alive = owner == 0u ? 0 : held;
    if ((SRNG_CAST(uint32_t, owner) & SRNG_OWNER_STATE) == SRNG_FORMATTING) *formatting = 1;
}

SHARED_RING_API int shared_ring_owners_of(const void *region, size_t region_size, int region_fd,
                                          shared_ring_owners *out) {
    const unsigned char *r = SRNG_CAST(const unsigned char *, region);
    uint32_t magic;
    int own, refused = srng_region_refusal(region, region_size);
    if (out != SRNG_NULL) memset(out, 0, sizeof *out);
    if (refused != SHARED_RING_OK) return refused;
    if (out == SRNG_NULL) return srng_refuse(SHARED_RING_ERR_ARG, "out is NULL");
    magic = SRNG_LOAD(SRNG_PUN(const srng_au32 *, r + SRNG_OFF_MAGIC), acquire);
    if (magic != SHARED_RING_MAGIC) return srng_magic_refusal(magic);
    refused = srng_open_own(region_fd, &own);
    if (refused != SHARED_RING_OK) return refused;
    out->ring_id = SRNG_LOAD(SRNG_PUN(const srng_au64 *, r + SRNG_OFF_RING_ID), relaxed);
    srng_owner_of(r, SRNG_OFF_PRODUCER_ID, own, &out->producer, &out->formatting);
    srng_owner_of(r, SRNG_OFF_CONSUMER_ID, own, &out->consumer, &out->formatting);
    srng_close_own(own);
    return SHARED_RING_OK;
}

/* The queries' gate (stats, usage): *out zeroed on every path; a broken handle still answers. */
static int srng_query_gate(const shared_ring_side *s, uint32_t magic, void *out, size_t size) {
    int r = srng_refusal(s, magic);
    if (out != SRNG_NULL) memset(out, 0, size);
    if (r == SHARED_RING_ERR_CORRUPT) r = SHARED_RING_OK;
    if (r != SHARED_RING_OK) return r;
    return out == SRNG_NULL ? srng_refuse(SHARED_RING_ERR_ARG, "out is NULL") : SHARED_RING_OK;
}

static int srng_stats(const shared_ring_side *s, uint32_t magic, shared_ring_stats *out) {
    int r = srng_query_gate(s, magic, out, sizeof *out);
    if (r == SHARED_RING_OK) {
        *out = s->stats;
        out->spin_now_ns = s->spin_now;
    }
    return r;
}

SHARED_RING_API int shared_ring_producer_stats(const shared_ring_producer *p,
                                               shared_ring_stats *out) {
    return srng_stats(p != SRNG_NULL ? &p->s : SRNG_NULL, SRNG_PRODUCER_MAGIC, out);
}

SHARED_RING_API int shared_ring_consumer_stats(const shared_ring_consumer *c,
                                               shared_ring_stats *out) {
    return srng_stats(c != SRNG_NULL ? &c->s : SRNG_NULL, SRNG_CONSUMER_MAGIC, out);
}

/* Usage between our position and the peer's (read once by the caller), clamped: a hostile value
   can make the numbers wrong, never out of range. */
static void srng_usage(const shared_ring_side *s, uint64_t read_pos, uint64_t write_pos,
                       shared_ring_usage *out) {
    uint64_t most = s->capacity - SRNG_REC_HEADER;
    uint64_t used = srng_is_past(read_pos, write_pos) ? 0u : write_pos - read_pos;
    if (used > most) used = most;
    out->capacity = s->capacity;
    out->used = used;
    out->free = most - used;
}

SHARED_RING_API int shared_ring_producer_usage(const shared_ring_producer *p,
                                               shared_ring_usage *out) {
    int r =
        srng_query_gate(p != SRNG_NULL ? &p->s : SRNG_NULL, SRNG_PRODUCER_MAGIC, out, sizeof *out);
    if (r != SHARED_RING_OK) return r;
    srng_usage(&p->s, SRNG_LOAD(srng_u64_at(p->s.region, SRNG_OFF_READ_POS), acquire), p->write_pos,
               out);
    return SHARED_RING_OK;
}

SHARED_RING_API int shared_ring_consumer_usage(const shared_ring_consumer *c,
                                               shared_ring_usage *out) {
    uint64_t w;
    int r =
        srng_query_gate(c != SRNG_NULL ? &c->s : SRNG_NULL, SRNG_CONSUMER_MAGIC, out, sizeof *out);
    if (r != SHARED_RING_OK) return r;
    /* write_pos may lag the newest record; what we have already seen counts. */
    w = SRNG_LOAD(srng_u64_at(c->s.region, SRNG_OFF_WRITE_POS), acquire);
    srng_usage(&c->s, c->read_pos, srng_is_past(w, c->peek_pos) ? w : c->peek_pos, out);
    return SHARED_RING_OK;
}

SHARED_RING_API size_t shared_ring_producer_max_message(const shared_ring_producer *p) {
    return srng_is_producer(p) ? p->s.max_message : 0u;
}

SHARED_RING_API size_t shared_ring_consumer_max_message(const shared_ring_consumer *c) {
    return srng_is_consumer(c) ? c->s.max_message : 0u;
}

SHARED_RING_API const char *shared_ring_wait_method(void) {
#if SRNG_OS_SLEEP == SRNG_SLEEPS_FUTEX
    return "futex";
#elif SRNG_OS_SLEEP == SRNG_SLEEPS_ULOCK
    return "ulock";
#elif SRNG_OS_SLEEP == SRNG_SLEEPS_WAIT_ON_ADDRESS
    return "WaitOnAddress";
#elif defined(_WIN32) && !defined(SHARED_RING_NO_OS_WAIT)
    return "Sleep";
#elif defined(SRNG_HAVE_POLL)
    return "naps";
#else
    return "spin";
#endif
}

SHARED_RING_API const char *shared_ring_result_string(int result) {
    switch (result) {
    case SHARED_RING_OK: return "ok";
    case SHARED_RING_FULL: return "ring is full";
    case SHARED_RING_EMPTY: return "ring is empty";
    case SHARED_RING_TIMEOUT: return "timed out";
    case SHARED_RING_CLOSED: return "the producer closed the stream";
    case SHARED_RING_ERR_ARG: return "invalid argument";
    case SHARED_RING_ERR_TOO_BIG: return "message larger than allowed";
    case SHARED_RING_ERR_SIZE: return "a size does not fit the ring (shared_ring_why says which)";
    case SHARED_RING_ERR_ALIGN: return "region not 8-byte aligned";
    case SHARED_RING_ERR_MAGIC: return "region not formatted (bad magic)";
    case SHARED_RING_ERR_VERSION: return "unsupported layout version";
    case SHARED_RING_ERR_CORRUPT: return "shared region is corrupt";
    case SHARED_RING_ERR_STATE: return "call not valid in this state";
    case SHARED_RING_ERR_HANDLE: return "handle not attached or wrong side";
    case SHARED_RING_NOT_FORMATTED: return "region not formatted yet";
    case SHARED_RING_ERR_BUSY: return "this side is attached (a live process, or another handle)";
    case SHARED_RING_PEER_GONE: return "the peer detached or its process is gone";
    case SHARED_RING_ERR_SYSTEM: return "the operating system refused (see errno)";
    case SHARED_RING_ERR_ACCESS:
        return "shared memory object of another user, or open wider than SHARED_RING_SHM_MODE";
    default: return result > 0 ? "ok (count)" : "unknown result";
    }
}

#ifdef SHARED_RING_SHM
/* ---- shared memory helpers ------------------------------------------------- */
/* glibc and musl hide ftruncate and shm_open from strict ISO C builds; the
   macros must come before the first #include, so all we can do is say so. */
#if defined(__linux__) && !defined(__cplusplus) && !defined(_GNU_SOURCE) && \
    !defined(_DEFAULT_SOURCE) && !defined(_BSD_SOURCE) && \
    !(defined(_POSIX_C_SOURCE) && _POSIX_C_SOURCE >= 200809L) && \
    !(defined(_XOPEN_SOURCE) && _XOPEN_SOURCE >= 700)
#error "SHARED_RING_SHM needs POSIX 2008: build with -std=gnu11, or define _GNU_SOURCE (or _POSIX_C_SOURCE 200809L) before the first #include"
#endif
#define SRNG_SHM_NAME_MAX 250u
static const char srng_bad_name_text[] = "name is NULL, or longer than 250 bytes";

static void srng_shm_reset(shared_ring_shm *shm) {
    memset(shm, 0, sizeof *shm);
    shm->fd = -1;
}

#if defined(_WIN32)
/* UTF-8 to the wide name the W functions take; 0 if it does not fit. */
static int srng_wide_name(const char *name, wchar_t *out, int cap) {
    return MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, name, -1, out, cap) > 0;
}

/* Map the whole of `h` (or `size` bytes) into *shm. */
static int srng_shm_view(shared_ring_shm *shm, HANDLE h, size_t size) {
    MEMORY_BASIC_INFORMATION info;
    void *view = MapViewOfFile(h, FILE_MAP_ALL_ACCESS, 0, 0, size);
    if (view == SRNG_NULL) {
        DWORD e = GetLastError();
        CloseHandle(h);
        if (e == ERROR_ACCESS_DENIED || e == ERROR_NOT_ENOUGH_MEMORY)
            return srng_refuse(SHARED_RING_ERR_SIZE, "MapViewOfFile: the mapping is smaller than asked");
        return srng_refuse(SHARED_RING_ERR_SYSTEM, "MapViewOfFile failed (GetLastError says why)");
    }
    if (size == 0) {
        if (VirtualQuery(view, &info, sizeof info) == 0) {
            UnmapViewOfFile(view);
            CloseHandle(h);
            return srng_refuse(SHARED_RING_ERR_SYSTEM, "VirtualQuery failed (GetLastError says why)");
        }
        size = info.RegionSize;
    }
    shm->region = view;
    shm->size = size;
    shm->handle = h;
    return SHARED_RING_OK;
}

SHARED_RING_API int shared_ring_shm_open(shared_ring_shm *shm, const char *name, size_t size,
                                         uint64_t timeout_ns) {
    wchar_t wname[SRNG_SHM_NAME_MAX + 1];
    uint64_t start = SHARED_RING_NOW_NS(), elapsed = 0;
    HANDLE h;
    int r;
    if (shm == SRNG_NULL) return srng_refuse(SHARED_RING_ERR_ARG, "shm is NULL");
    srng_shm_reset(shm);
    if (name == SRNG_NULL || !srng_wide_name(name, wname, SRNG_SHM_NAME_MAX + 1))
        return srng_refuse(SHARED_RING_ERR_ARG, srng_bad_name_text);
    for (;;) {
        if (size != 0) {
            uint64_t s64 = size;
            /* Creates it zero-filled at its final size, or opens it: never exists unsized. */
            h = CreateFileMappingW(INVALID_HANDLE_VALUE, SRNG_NULL, PAGE_READWRITE,
                                   SRNG_CAST(DWORD, s64 >> 32), SRNG_CAST(DWORD, s64), wname);
            if (h == SRNG_NULL)
                return srng_refuse(SHARED_RING_ERR_SYSTEM, "CreateFileMappingW failed (GetLastError says why)");
            shm->created = GetLastError() != ERROR_ALREADY_EXISTS;
            break;
        }
        h = OpenFileMappingW(FILE_MAP_ALL_ACCESS, FALSE, wname);
        if (h != SRNG_NULL) break;
        if (GetLastError() != ERROR_FILE_NOT_FOUND)
            return srng_refuse(SHARED_RING_ERR_SYSTEM, "OpenFileMappingW failed (GetLastError says why)");
        if (timeout_ns == 0) /* a zero timeout never says TIMEOUT */
            return srng_refuse(SHARED_RING_NOT_FORMATTED, "the object does not exist, or is not sized, yet");
        if (!srng_nap_unless_timed_out(start, &elapsed, timeout_ns))
            return srng_refuse(SHARED_RING_TIMEOUT, "the object did not exist, sized, within the timeout");
    }
    r = srng_shm_view(shm, h, size);
    if (r != SHARED_RING_OK) srng_shm_reset(shm);
    return r;
}

SHARED_RING_API int shared_ring_shm_anonymous(shared_ring_shm *shm, size_t size) {
    uint64_t s64 = size;
    HANDLE h;
    int r;
    if (shm == SRNG_NULL) return srng_refuse(SHARED_RING_ERR_ARG, "shm is NULL");
    srng_shm_reset(shm);
    if (size == 0) return srng_refuse(SHARED_RING_ERR_SIZE, "size is 0");
    h = CreateFileMappingW(INVALID_HANDLE_VALUE, SRNG_NULL, PAGE_READWRITE,
                           SRNG_CAST(DWORD, s64 >> 32), SRNG_CAST(DWORD, s64), SRNG_NULL);
    if (h == SRNG_NULL)
        return srng_refuse(SHARED_RING_ERR_SYSTEM, "CreateFileMappingW failed (GetLastError says why)");
    shm->created = 1;
    r = srng_shm_view(shm, h, size);
    if (r != SHARED_RING_OK) srng_shm_reset(shm);
    return r;
}

SHARED_RING_API int shared_ring_shm_map_fd(shared_ring_shm *shm, int fd) {
    (void)fd;
    if (shm != SRNG_NULL) srng_shm_reset(shm);
    return srng_refuse(SHARED_RING_ERR_ARG, "shm_map_fd: Windows has no descriptors to map");
}

SHARED_RING_API int shared_ring_shm_close(shared_ring_shm *shm) {
    int ok;
    if (shm == SRNG_NULL || shm->region == SRNG_NULL)
        return srng_refuse(SHARED_RING_ERR_ARG, "shm is NULL, or not mapped");
    ok = UnmapViewOfFile(shm->region) != 0;
    ok &= CloseHandle(SRNG_CAST(HANDLE, shm->handle)) != 0;
    srng_shm_reset(shm);
    return ok ? SHARED_RING_OK : srng_refuse(SHARED_RING_ERR_SYSTEM, "unmapping or closing failed");
}

SHARED_RING_API int shared_ring_shm_unlink(const char *name) {
    wchar_t wname[SRNG_SHM_NAME_MAX + 1];
    if (name == SRNG_NULL || !srng_wide_name(name, wname, SRNG_SHM_NAME_MAX + 1))
        return srng_refuse(SHARED_RING_ERR_ARG, srng_bad_name_text);
    return SHARED_RING_OK; /* a mapping goes away with its last handle */
}
#else
#include <errno.h> /* not included with the OS waits under SHARED_RING_NO_OS_WAIT */
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/syscall.h>
#endif

/* Map all of `fd` (its size checked first) into *shm, which keeps fd. */
static int srng_shm_map(shared_ring_shm *shm, int fd, size_t want) {
    struct stat st;
    off_t n;
    size_t len;
    void *m;
    if (fstat(fd, &st) != 0) return srng_refuse(SHARED_RING_ERR_SYSTEM, "fstat failed (errno says why)");
    n = st.st_size;
    if (n < SRNG_CAST(off_t, SHARED_RING_HEADER_SIZE))
        return srng_explain(SHARED_RING_ERR_SIZE, "the object has %u bytes, below the %u-byte header",
                            SRNG_CAST(uint64_t, n), SHARED_RING_HEADER_SIZE, 0);
    len = SRNG_CAST(size_t, n);
    if (SRNG_CAST(off_t, len) != n || (want != 0 && len != want))
        return srng_explain(SHARED_RING_ERR_SIZE,
                            "the object has %u bytes, not the %u asked for (size 0 takes its size)",
                            SRNG_CAST(uint64_t, n), want, 0);
    m = mmap(SRNG_NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) return srng_refuse(SHARED_RING_ERR_SYSTEM, "mmap failed (errno says why)");
    shm->region = m;
    shm->size = len;
    shm->fd = fd;
    return SHARED_RING_OK;
}

/* srng_shm_map for a descriptor this call opened: closed, and *shm zeroed, on failure. */
static int srng_shm_map_own(shared_ring_shm *shm, int fd, size_t want) {
    int r = srng_shm_map(shm, fd, want);
    if (r != SHARED_RING_OK) {
        close(fd);
        srng_shm_reset(shm);
    }
    return r;
}

#ifndef SHARED_RING_SHM_MODE
#define SHARED_RING_SHM_MODE 0600
#endif

/* May we trust an object someone else created? This user's, or another's if our mode lets group
   or others in; never open wider than our mode: whoever else may write it can inject messages. */
static int srng_shm_trusted(const struct stat *st) {
    unsigned mode = SRNG_CAST(unsigned, st->st_mode) & 0777u;
    unsigned allowed = SRNG_CAST(unsigned, SHARED_RING_SHM_MODE) & 0777u;
    if ((mode & ~allowed) != 0u) return 0;
    return st->st_uid == geteuid() || (allowed & 066u) != 0u;
}

/* Size a new object (under srng_shm_size_once's lock). Linux allocates the memory here (fallocate
   never shrinks; a full /dev/shm fails now, not as a later SIGBUS); elsewhere ftruncate. */
static int srng_shm_grow(int fd, off_t want) {
#if defined(__linux__)
    if (posix_fallocate(fd, 0, want) == 0) return SHARED_RING_OK;
    return srng_refuse(SHARED_RING_ERR_SYSTEM, "posix_fallocate failed (is the shared memory full?)");
#else
    if (ftruncate(fd, want) == 0) return SHARED_RING_OK;
    return srng_refuse(SHARED_RING_ERR_SYSTEM, "ftruncate failed (errno says why)");
#endif
}

/* Size an object found (or just created) at 0 bytes, once: whoever first takes a write lock on
   its first byte sizes it; the others find it sized under the lock and leave it, so a different
   size of theirs fails their mapping (ERR_SIZE) instead of both being told OK. The kernel drops a
   dying holder's lock. Returns OK, 1 while another process holds the lock (it is sizing: look
   again within the caller's timeout), or ERR_SYSTEM. (A POSIX record lock does not keep threads
   of one process apart. An object that takes no lock is sized unlocked, and two such openers may
   both be told OK: the smaller one's attach then says ERR_SIZE.) */
static int srng_shm_size_once(int fd, off_t want) {
    struct flock fl;
    struct stat st;
    int r, locked;
    memset(&fl, 0, sizeof fl);
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    fl.l_len = 1;
    while ((locked = fcntl(fd, F_SETLK, &fl) == 0) == 0 && errno == EINTR) continue;
    if (!locked && (errno == EAGAIN || errno == EACCES)) return 1;
    if (fstat(fd, &st) != 0)
        r = srng_refuse(SHARED_RING_ERR_SYSTEM, "fstat failed (errno says why)");
    else
        r = st.st_size == 0 ? srng_shm_grow(fd, want) : SHARED_RING_OK;
    fl.l_type = F_UNLCK;
    if (locked) (void)fcntl(fd, F_SETLK, &fl);
    return r;
}

/* An existing object: returns OK to map it, 1 to wait (unsized, and we do not know the size), or
   an error. One never sized (its creator died between shm_open and sizing) is sized by an opener
   that knows the size; the mapping then checks that the size is ours. */
static int srng_shm_check_existing(int fd, off_t want) {
    struct stat st;
    unsigned owner, mode, me; /* uid_t and mode_t: unsigned, of some width */
    if (fstat(fd, &st) != 0) return srng_refuse(SHARED_RING_ERR_SYSTEM, "fstat failed (errno says why)");
    owner = st.st_uid;
    mode = st.st_mode & 0777u;
    me = geteuid();
    if (!srng_shm_trusted(&st))
        return srng_explain(SHARED_RING_ERR_ACCESS,
                            "the object belongs to uid %u with mode 0%o, open wider than this "
                            "user's SHARED_RING_SHM_MODE or not this user's (uid %u)",
                            owner, mode, me);
    SRNG_SCHED_POINT("shm: size read");
    if (st.st_size != 0) return SHARED_RING_OK;
    if (want == 0) return 1;
    return srng_shm_size_once(fd, want);
}

SHARED_RING_API int shared_ring_shm_open(shared_ring_shm *shm, const char *name, size_t size,
                                         uint64_t timeout_ns) {
    uint64_t start = SHARED_RING_NOW_NS(), elapsed = 0;
    off_t want = SRNG_CAST(off_t, size);
    int fd, r, created = 0;
    if (shm == SRNG_NULL) return srng_refuse(SHARED_RING_ERR_ARG, "shm is NULL");
    srng_shm_reset(shm);
    if (name == SRNG_NULL || strlen(name) > SRNG_SHM_NAME_MAX)
        return srng_refuse(SHARED_RING_ERR_ARG, srng_bad_name_text);
    if (want < 0 || SRNG_CAST(size_t, want) != size)
        return srng_explain(SHARED_RING_ERR_SIZE, "size %u does not fit a file offset", size, 0, 0);
    for (;;) {
        if (size != 0 && !created) {
            /* Create it, or learn that it exists; then size it, unless an
               opener that found it unsized does (then wait for it). */
            fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, SHARED_RING_SHM_MODE);
            if (fd >= 0) {
                SRNG_SCHED_POINT("shm: created");
                created = 1;
                r = srng_shm_size_once(fd, want);
                if (r == SHARED_RING_OK) break;
                close(fd);
                if (r != 1) {
                    shm_unlink(name);
                    return r; /* srng_shm_size_once said why */
                }
            } else if (errno != EEXIST) {
                return srng_refuse(SHARED_RING_ERR_SYSTEM, "shm_open failed (errno says why)");
            }
        }
        fd = shm_open(name, O_RDWR | O_NOFOLLOW, 0);
        if (fd >= 0) {
            r = srng_shm_check_existing(fd, want);
            if (r == SHARED_RING_OK) break;
            close(fd); /* r == 1: its creator or an opener is sizing it */
            if (r != 1) return r;
        } else if (errno != ENOENT) {
            return srng_refuse(SHARED_RING_ERR_SYSTEM, "shm_open failed (errno says why)");
        }
        if (timeout_ns == 0) /* a zero timeout never says TIMEOUT */
            return srng_refuse(SHARED_RING_NOT_FORMATTED, "the object does not exist, or is not sized, yet");
        if (!srng_nap_unless_timed_out(start, &elapsed, timeout_ns))
            return srng_refuse(SHARED_RING_TIMEOUT, "the object did not exist, sized, within the timeout");
    }
    r = srng_shm_map_own(shm, fd, size);
    if (r == SHARED_RING_OK) shm->created = created;
    return r;
}

/* Seal a memfd's size (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) so no holder of the fd can
   truncate it under a mapping (SIGBUS in the reader). 1 on success; elsewhere nothing to seal. */
static int srng_seal_size(int fd) {
#if defined(__linux__) && defined(SYS_memfd_create)
    return fcntl(fd, 1033 /* F_ADD_SEALS */, 2 | 4 | 1) == 0;
#else
    (void)fd;
    return 1;
#endif
}

SHARED_RING_API int shared_ring_shm_anonymous(shared_ring_shm *shm, size_t size) {
    int fd;
    if (shm == SRNG_NULL) return srng_refuse(SHARED_RING_ERR_ARG, "shm is NULL");
    srng_shm_reset(shm);
    if (size == 0) return srng_refuse(SHARED_RING_ERR_SIZE, "size is 0");
#if defined(__linux__) && defined(SYS_memfd_create)
    /* MFD_CLOEXEC | MFD_ALLOW_SEALING */
    fd = SRNG_CAST(int, syscall(SYS_memfd_create, "shared_ring", 1u | 2u));
#else
    {
        /* A private name, unlinked at once: only the descriptor is left. */
        char name[64] = "/shared_ring-";
        uint64_t x = srng_new_ring_id(shm);
        size_t at = strlen(name);
        while (x != 0 && at < sizeof name - 1u) {
            name[at++] = SRNG_CAST(char, 'a' + x % 26u);
            x /= 26u;
        }
        name[at] = 0;
        fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fd >= 0) shm_unlink(name);
    }
#endif
    if (fd < 0)
        return srng_refuse(SHARED_RING_ERR_SYSTEM, "memfd_create or shm_open failed (errno says why)");
    if (SRNG_CAST(off_t, size) < 0 || ftruncate(fd, SRNG_CAST(off_t, size)) != 0 ||
        !srng_seal_size(fd)) {
        close(fd);
        return srng_refuse(SHARED_RING_ERR_SYSTEM, "sizing or sealing the memory failed (errno says why)");
    }
    shm->created = 1;
    return srng_shm_map_own(shm, fd, size);
}

SHARED_RING_API int shared_ring_shm_map_fd(shared_ring_shm *shm, int fd) {
    int r;
    if (shm == SRNG_NULL) return srng_refuse(SHARED_RING_ERR_ARG, "shm is NULL");
    srng_shm_reset(shm);
    if (fd < 0) return srng_refuse(SHARED_RING_ERR_ARG, "fd is negative");
    r = srng_shm_map(shm, fd, 0);
    if (r != SHARED_RING_OK) srng_shm_reset(shm);
    return r;
}

SHARED_RING_API int shared_ring_shm_close(shared_ring_shm *shm) {
    int ok;
    if (shm == SRNG_NULL || shm->region == SRNG_NULL)
        return srng_refuse(SHARED_RING_ERR_ARG, "shm is NULL, or not mapped");
    ok = munmap(shm->region, shm->size) == 0;
    if (shm->fd >= 0) ok &= close(shm->fd) == 0;
    srng_shm_reset(shm);
    return ok ? SHARED_RING_OK : srng_refuse(SHARED_RING_ERR_SYSTEM, "unmapping or closing failed");
}

SHARED_RING_API int shared_ring_shm_unlink(const char *name) {
    if (name == SRNG_NULL || strlen(name) > SRNG_SHM_NAME_MAX)
        return srng_refuse(SHARED_RING_ERR_ARG, srng_bad_name_text);
    if (shm_unlink(name) == 0) return SHARED_RING_OK;
    return srng_refuse(SHARED_RING_ERR_SYSTEM, "shm_unlink failed (errno says why; ENOENT: no such name)");
}
#endif

SHARED_RING_API int shared_ring_shm_prefault(shared_ring_shm *shm) {
    size_t off;
    if (shm == SRNG_NULL || shm->region == SRNG_NULL)
        return srng_refuse(SHARED_RING_ERR_ARG, "shm is NULL, or not mapped");
    /* atomic: the peer may be writing there (4 KiB steps: a larger page is just touched more) */
    for (off = 0; off + 4u <= shm->size; off += 4096u)
        (void)SRNG_LOAD(SRNG_PUN(srng_au32 *, SRNG_CAST(unsigned char *, shm->region) + off), relaxed);
    return SHARED_RING_OK;
}
#endif /* SHARED_RING_SHM */

#ifdef SHARED_RING_NOTIFIER
/* ---- the notifier ------------------------------------------------------------ */
static void srng_notifier_reset(shared_ring_notifier *n) {
    n->fd[0] = n->fd[1] = n->signal_fd[0] = n->signal_fd[1] = -1;
    n->event[0] = n->event[1] = SRNG_NULL;
}

/* A named notifier's end `end` as `prefix` + name + its suffix, in out (at least 256 bytes): 0
   if the name is not "/" and one more component of at most 200 bytes. */
static const char srng_bad_notifier_name[] =
    "name is NULL, or not \"/\" and a name without another \"/\", or longer than 200 bytes";
static int srng_notifier_path(char *out, const char *prefix, const char *name, int end) {
    static const char *const suffix[2] = { ".consumer-wake", ".producer-wake" };
    size_t a, b, c;
    if (name == SRNG_NULL || name[0] != '/' || name[1] == 0 || strchr(name + 1, '/') != SRNG_NULL)
        return 0;
    a = strlen(prefix);
    b = strlen(name);
    c = strlen(suffix[end]);
    if (b > 200u || a > 40u) return 0;
    memcpy(out, prefix, a);
    memcpy(out + a, name, b);
    memcpy(out + a + b, suffix[end], c + 1u);
    return 1;
}

#if defined(_WIN32)
SHARED_RING_API int shared_ring_notifier_open(shared_ring_notifier *n) {
    int i;
    if (n == SRNG_NULL) return srng_refuse(SHARED_RING_ERR_ARG, "n is NULL");
    srng_notifier_reset(n);
    for (i = 0; i < 2; i++) {
        n->event[i] = CreateEventW(SRNG_NULL, FALSE, FALSE, SRNG_NULL); /* auto-reset */
        if (n->event[i] == SRNG_NULL) {
            (void)shared_ring_notifier_close(n);
            return srng_refuse(SHARED_RING_ERR_SYSTEM, "CreateEventW failed (GetLastError says why)");
        }
    }
    return SHARED_RING_OK;
}

static void srng_notifier_signal(shared_ring_notifier *n, int end) { (void)SetEvent(n->event[end]); }

static void srng_notifier_sleep(shared_ring_notifier *n, int end, uint64_t timeout_ns) {
    DWORD ms = timeout_ns == SHARED_RING_FOREVER ? INFINITE
               : timeout_ns / 1000000u >= 0xFFFFFFFEu
                   ? 0xFFFFFFFEu
                   : SRNG_CAST(DWORD, (timeout_ns + 999999u) / 1000000u);
    (void)WaitForSingleObject(n->event[end], ms);
}

SHARED_RING_API int shared_ring_notifier_clear(shared_ring_notifier *n, int end) {
    if (n == SRNG_NULL || (end != 0 && end != 1))
        return srng_refuse(SHARED_RING_ERR_ARG, "n is NULL, or end is neither CONSUMER_END nor PRODUCER_END");
    (void)ResetEvent(n->event[end]);
    return SHARED_RING_OK;
}

SHARED_RING_API int shared_ring_notifier_close(shared_ring_notifier *n) {
    int ok = 1, i;
    if (n == SRNG_NULL) return srng_refuse(SHARED_RING_ERR_ARG, "n is NULL");
    for (i = 0; i < 2; i++)
        if (n->event[i] != SRNG_NULL) ok &= CloseHandle(n->event[i]) != 0;
    srng_notifier_reset(n);
    return ok ? SHARED_RING_OK : srng_refuse(SHARED_RING_ERR_SYSTEM, "closing a descriptor failed");
}
SHARED_RING_API int shared_ring_notifier_open_named(shared_ring_notifier *n, const char *name) {
    char path[256];
    wchar_t wide[256];
    int i;
    if (n == SRNG_NULL) return srng_refuse(SHARED_RING_ERR_ARG, "n is NULL");
    srng_notifier_reset(n);
    for (i = 0; i < 2; i++) {
        if (!srng_notifier_path(path, "Local\\", name, i))
            return srng_refuse(SHARED_RING_ERR_ARG, srng_bad_notifier_name);
        if (MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, wide, 256) == 0) {
            (void)shared_ring_notifier_close(n);
            return srng_refuse(SHARED_RING_ERR_ARG, srng_bad_notifier_name);
        }
        n->event[i] = CreateEventW(SRNG_NULL, FALSE, FALSE, wide); /* creates or opens */
        if (n->event[i] == SRNG_NULL) {
            (void)shared_ring_notifier_close(n);
            return srng_refuse(SHARED_RING_ERR_SYSTEM, "CreateEventW failed (GetLastError says why)");
        }
    }
    return SHARED_RING_OK;
}

SHARED_RING_API int shared_ring_notifier_unlink(const char *name) {
    char path[256];
    if (!srng_notifier_path(path, "", name, 0))
        return srng_refuse(SHARED_RING_ERR_ARG, srng_bad_notifier_name);
    return SHARED_RING_OK; /* an event goes away with its last handle */
}
#else
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__linux__) && !defined(SHARED_RING_NOTIFIER_PIPES)
#include <sys/eventfd.h>
#endif

/* One end: an eventfd (Linux), else a pipe; non-blocking, close-on-exec. */
static int srng_notifier_end(shared_ring_notifier *n, int end) {
#if defined(__linux__) && !defined(SHARED_RING_NOTIFIER_PIPES)
    n->fd[end] = n->signal_fd[end] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    return n->fd[end] >= 0;
#else
    int p[2], i;
    if (pipe(p) != 0) return 0;
    for (i = 0; i < 2; i++)
        if (fcntl(p[i], F_SETFL, O_NONBLOCK) != 0 || fcntl(p[i], F_SETFD, FD_CLOEXEC) != 0) {
            close(p[0]);
            close(p[1]);
            return 0;
        }
    n->fd[end] = p[0];
    n->signal_fd[end] = p[1];
    return 1;
#endif
}

SHARED_RING_API int shared_ring_notifier_open(shared_ring_notifier *n) {
    if (n == SRNG_NULL) return srng_refuse(SHARED_RING_ERR_ARG, "n is NULL");
    srng_notifier_reset(n);
    if (srng_notifier_end(n, 0) && srng_notifier_end(n, 1)) return SHARED_RING_OK;
    (void)shared_ring_notifier_close(n);
    return srng_refuse(SHARED_RING_ERR_SYSTEM, "eventfd or pipe failed (errno says why)");
}

#if defined(__linux__)
#define SRNG_NOTIFIER_DIR "/dev/shm"
#else
#define SRNG_NOTIFIER_DIR "/tmp"
#endif

/* One end of a named notifier: the FIFO at `path` (made if missing), read via fd[end], written
   via signal_fd[end] (read-write: it opens whether or not the peer has it open, and the read end
   never sees the last writer go). Both descriptors must be the one FIFO of ours. */
static int srng_notifier_fifo(shared_ring_notifier *n, const char *path, int end) {
    struct stat st, again;
    if (mkfifo(path, 0600) != 0 && errno != EEXIST)
        return srng_refuse(SHARED_RING_ERR_SYSTEM, "mkfifo failed (errno says why)");
    n->fd[end] = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
    if (n->fd[end] < 0) return srng_refuse(SHARED_RING_ERR_SYSTEM, "opening the FIFO failed (errno says why)");
    n->signal_fd[end] = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
    if (n->signal_fd[end] < 0)
        return srng_refuse(SHARED_RING_ERR_SYSTEM, "opening the FIFO failed (errno says why)");
    if (fstat(n->fd[end], &st) != 0 || fstat(n->signal_fd[end], &again) != 0)
        return srng_refuse(SHARED_RING_ERR_SYSTEM, "fstat failed (errno says why)");
    /* whoever may write it can wake us at will, and read our wake-ups */
    if (!S_ISFIFO(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022u) != 0u ||
        st.st_ino != again.st_ino || st.st_dev != again.st_dev)
        return srng_refuse(SHARED_RING_ERR_ACCESS,
                           "the FIFO is not this user's, others may write it, or it is no FIFO");
    return SHARED_RING_OK;
}

SHARED_RING_API int shared_ring_notifier_open_named(shared_ring_notifier *n, const char *name) {
    char path[256];
    int i, r;
    if (n == SRNG_NULL) return srng_refuse(SHARED_RING_ERR_ARG, "n is NULL");
    srng_notifier_reset(n);
    for (i = 0; i < 2; i++) {
        if (!srng_notifier_path(path, SRNG_NOTIFIER_DIR, name, i))
            return srng_refuse(SHARED_RING_ERR_ARG, srng_bad_notifier_name);
        r = srng_notifier_fifo(n, path, i);
        if (r != SHARED_RING_OK) {
            int keep = errno;
            for (i = 0; i < 2; i++) { /* close without a new reason */
                if (n->fd[i] >= 0) close(n->fd[i]);
                if (n->signal_fd[i] >= 0) close(n->signal_fd[i]);
            }
            srng_notifier_reset(n);
            errno = keep;
            return r;
        }
    }
    return SHARED_RING_OK;
}

SHARED_RING_API int shared_ring_notifier_unlink(const char *name) {
    char path[256];
    int i, ok = 1;
    for (i = 0; i < 2; i++) {
        if (!srng_notifier_path(path, SRNG_NOTIFIER_DIR, name, i))
            return srng_refuse(SHARED_RING_ERR_ARG, srng_bad_notifier_name);
        ok &= unlink(path) == 0;
    }
    return ok ? SHARED_RING_OK
              : srng_refuse(SHARED_RING_ERR_SYSTEM, "unlink failed (errno says why; ENOENT: no such name)");
}

/* Make fd[end] readable. A failed write loses nothing: a full pipe or eventfd is readable. */
static void srng_notifier_signal(shared_ring_notifier *n, int end) {
    uint64_t one = 1;
    if (write(n->signal_fd[end], &one, n->fd[end] == n->signal_fd[end] ? sizeof one : 1u) < 0) {
    }
}

static void srng_notifier_sleep(shared_ring_notifier *n, int end, uint64_t timeout_ns) {
    struct pollfd pfd;
    int ms = timeout_ns == SHARED_RING_FOREVER      ? -1
             : timeout_ns / 1000000u >= INT_MAX - 1 ? INT_MAX
                                                    : SRNG_CAST(int, (timeout_ns + 999999u) / 1000000u);
    pfd.fd = n->fd[end];
    pfd.events = POLLIN;
    pfd.revents = 0;
    if (poll(&pfd, 1, ms) > 0) (void)shared_ring_notifier_clear(n, end);
}

SHARED_RING_API int shared_ring_notifier_clear(shared_ring_notifier *n, int end) {
    unsigned char buf[64];
    if (n == SRNG_NULL || (end != 0 && end != 1))
        return srng_refuse(SHARED_RING_ERR_ARG, "n is NULL, or end is neither CONSUMER_END nor PRODUCER_END");
    /* An eventfd reads whole (8 bytes); a pipe until it is empty. */
    while (read(n->fd[end], buf, sizeof buf) > 0 && n->fd[end] != n->signal_fd[end]) {
    }
    return SHARED_RING_OK;
}

SHARED_RING_API int shared_ring_notifier_close(shared_ring_notifier *n) {
    int ok = 1, i;
    if (n == SRNG_NULL) return srng_refuse(SHARED_RING_ERR_ARG, "n is NULL");
    for (i = 0; i < 2; i++) {
        if (n->signal_fd[i] >= 0 && n->signal_fd[i] != n->fd[i]) ok &= close(n->signal_fd[i]) == 0;
        if (n->fd[i] >= 0) ok &= close(n->fd[i]) == 0;
    }
    srng_notifier_reset(n);
    return ok ? SHARED_RING_OK : srng_refuse(SHARED_RING_ERR_SYSTEM, "closing a descriptor failed");
}
#endif

/* The hooks: sleep on our end while our word holds what we announced; wake the peer on its end. */
static void srng_notifier_wait(void *user, void *addr, uint32_t expected, uint64_t timeout_ns,
                               int end) {
    if (SRNG_LOAD(SRNG_CAST(srng_au32 *, addr), acquire) != expected) return;
    srng_notifier_sleep(SRNG_CAST(shared_ring_notifier *, user), end, timeout_ns);
}
static void srng_notifier_wait_consumer(void *user, void *addr, uint32_t expected,
                                        uint64_t timeout_ns) {
    srng_notifier_wait(user, addr, expected, timeout_ns, SHARED_RING_CONSUMER_END);
}
static void srng_notifier_wait_producer(void *user, void *addr, uint32_t expected,
                                        uint64_t timeout_ns) {
    srng_notifier_wait(user, addr, expected, timeout_ns, SHARED_RING_PRODUCER_END);
}
static void srng_notifier_wake_consumer(void *user, void *addr) {
    (void)addr;
    srng_notifier_signal(SRNG_CAST(shared_ring_notifier *, user), SHARED_RING_CONSUMER_END);
}
static void srng_notifier_wake_producer(void *user, void *addr) {
    (void)addr;
    srng_notifier_signal(SRNG_CAST(shared_ring_notifier *, user), SHARED_RING_PRODUCER_END);
}

SHARED_RING_API int shared_ring_notifier_options(shared_ring_notifier *n, int end,
                                                 shared_ring_options *o) {
    if (n == SRNG_NULL || o == SRNG_NULL) return srng_refuse(SHARED_RING_ERR_ARG, "n or o is NULL");
    if (end == SHARED_RING_CONSUMER_END) {
        o->wait = srng_notifier_wait_consumer;
        o->wake = srng_notifier_wake_producer; /* a consumer wakes its producer */
    } else if (end == SHARED_RING_PRODUCER_END) {
        o->wait = srng_notifier_wait_producer;
        o->wake = srng_notifier_wake_consumer;
    } else {
        return srng_explain(SHARED_RING_ERR_ARG,
                            "end is %u, neither CONSUMER_END nor PRODUCER_END", SRNG_CAST(unsigned, end), 0, 0);
    }
    o->hook_user = n;
    return SHARED_RING_OK;
}
#endif /* SHARED_RING_NOTIFIER */

#if defined(__clang__)
#pragma clang diagnostic pop
#endif
#endif /* SHARED_RING_IMPLEMENTATION_DONE */
#endif /* SHARED_RING_IMPLEMENTATION */

/*
------------------------------------------------------------------------------
MIT License

Copyright (c) 2026 the shared_ring.h authors

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
------------------------------------------------------------------------------
*/
