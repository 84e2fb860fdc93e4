/* Sleep and wake-up (docs/protocol.md, "Who fences"), as a Promela model
   for spin: a publisher that stores a message and then looks at the
   sleeper's word, and a sleeper that announces itself, re-checks and
   sleeps on a futex. Stores go through a store buffer (x86's TSO: a load
   may pass the thread's own earlier stores), which a fence drains, and
   which the sleeper's membarrier drains on the publisher's CPU.

   FENCELESS: the publisher does not fence (a peer in its own process);
   the sleeper then calls membarrier before its re-check. Otherwise the
   publisher fences between its store and its look.

   Checked: no wake-up is lost, with the safety net (recheck_ns) off: an
   end state in which the sleeper sleeps while a message is published is
   invalid. Each rule can be reverted with -D, and spin must then fail:
   NO_MEMBARRIER (FENCELESS without the sleeper's membarrier),
   NO_PUBLISH_FENCE (a fenced publisher that does not fence),
   NO_RECHECK (the sleeper sleeps without a look after its announcement),
   NO_SLEEPER_FENCE (the announcement left in the sleeper's buffer).

   NAPS: a sleeper nobody promises a wake-up (SHARED_RING_POLL_ONLY, or a
   peer that has yet to choose its barrier for it) naps instead: a sleep
   of at most one slice (SRNG_SLICE_NS), after which it looks again. Its
   publisher may then neither fence nor be reached by a membarrier (with
   FENCELESS and NO_MEMBARRIER: another process), so no wake-up is owed,
   and what is checked is bounded delay instead: time passes in slices,
   only while the sleeper sleeps (its other steps take far less), a store
   reaches memory within a slice, and a message in memory at the end of a
   slice is taken before the end of the next (an assertion). The sleeper
   does block (until a wake-up or the end of its slice), so an end state
   with it asleep is still invalid. Its rule, reverted:
   NO_SLICE (the nap is not cut to a slice: it lasts until a wake-up or
   the safety net, RECHECK_SLICES slices). */

#define MESSAGES 2
#define RECHECK_SLICES 3 /* recheck_ns (250 ms) is many slices (1 ms) */

byte visible;       /* messages in memory, seen by the sleeper */
byte buffered;      /* messages still in the publisher's store buffer */
byte taken;         /* messages the sleeper consumed */
bit sleeping;       /* the sleeper's word in memory */
bit sleeping_buffered; /* its announcement, still in its own buffer */
bool waiting;       /* blocked in futex_wait */
#ifdef NAPS
byte slices_left;   /* how long the current sleep may still last */
byte late;          /* slices that ended with a message in memory untaken */
#endif

inline drain_publisher() { atomic { visible = visible + buffered; buffered = 0 } }

active proctype Publisher() {
    byte i;
    bit was;
    for (i : 1 .. MESSAGES) {
        buffered++;                       /* the record's header store */
#if !defined(FENCELESS) && !defined(NO_PUBLISH_FENCE)
        drain_publisher();                /* the full fence */
#endif
        /* the look at the sleeper's word: whoever swaps the 1 out makes
           the wake-up call (futex_wake wakes only a sleeper already in
           futex_wait; one that comes later finds the word 0 and returns) */
        atomic { was = sleeping; sleeping = 0 };
        if
        :: was -> waiting = false
        :: else -> skip
        fi
    }
}

#ifdef NAPS
/* The end of a slice, while the sleeper sleeps. */
active proctype Clock() {
end: do
    :: atomic { waiting ->
         drain_publisher();                /* a store reaches memory within a slice */
         if :: visible > taken -> late++ :: else -> skip fi;
         assert(late <= 1);                /* bounded delay */
         slices_left--;
         if :: slices_left == 0 -> waiting = false :: else -> skip fi }
    od
}
#endif

/* The CPUs drain store buffers on their own, at any time. */
active proctype Drain() {
end: do
    :: buffered > 0 -> drain_publisher()
    :: sleeping_buffered -> atomic { sleeping = 1; sleeping_buffered = 0 }
    od
}

active proctype Sleeper() {
    do
    :: taken == MESSAGES -> break
#ifdef NAPS
    :: visible > taken -> atomic { taken++; late = 0 } /* a message is there */
#else
    :: visible > taken -> taken++          /* a message is there */
#endif
    :: visible == taken && taken < MESSAGES -> /* nothing yet: announce, re-check, sleep */
#ifdef NO_SLEEPER_FENCE
       sleeping_buffered = 1;
#else
       sleeping = 1;                       /* store, then the full fence */
#endif
#if defined(FENCELESS) && !defined(NO_MEMBARRIER)
       drain_publisher();                  /* membarrier: a barrier on the publisher's CPU */
#endif
#ifndef NO_RECHECK
       if
       :: visible > taken -> atomic { sleeping = 0; sleeping_buffered = 0 }; goto again
       :: else -> skip
       fi;
#endif
       /* futex_wait(word, 1): sleeps only if the word still says asleep */
       atomic { if :: sleeping == 1 || sleeping_buffered -> waiting = true :: else -> skip fi;
#if defined(NAPS) && !defined(NO_SLICE)
                slices_left = 1                /* a nap: one slice at most */
#elif defined(NAPS)
                slices_left = RECHECK_SLICES   /* only the safety net ends it */
#else
                skip
#endif
       };
       (!waiting);                         /* woken, or (NAPS) the sleep's time is up */
       atomic { sleeping = 0; sleeping_buffered = 0 };
again: skip
    od
}
