/* Sleep and wake-up (docs/protocol.md, "Who fences"), as a Promela model
   for spin: a publisher that stores a message and then looks at the
   sleeper's word, and a sleeper that announces itself, re-checks and
   sleeps on a futex. Stores go through a store buffer (x86's TSO: a load
   may pass the thread's own earlier stores), which a fence drains, and
   which the sleeper's membarrier drains on the publisher's CPU.

   FENCELESS: the publisher does not fence (a peer in its own process);
   the sleeper then calls membarrier before its re-check. Otherwise the
   publisher fences between its store and its look. NAPS: the sleeper
   naps instead (SHARED_RING_POLL_ONLY): its sleep ends by itself, so with
   FENCELESS and NO_MEMBARRIER (it runs in another process, which its
   membarrier does not reach) nothing is lost either.

   Checked: no wake-up is lost, with the safety net (recheck_ns) off: an
   end state in which the sleeper sleeps while a message is published is
   invalid. Each rule can be reverted with -D, and spin must then fail:
   NO_MEMBARRIER (FENCELESS without the sleeper's membarrier),
   NO_PUBLISH_FENCE (a fenced publisher that does not fence),
   NO_RECHECK (the sleeper sleeps without a look after its announcement),
   NO_SLEEPER_FENCE (the announcement left in the sleeper's buffer). */

#define MESSAGES 2

byte visible;       /* messages in memory, seen by the sleeper */
byte buffered;      /* messages still in the publisher's store buffer */
byte taken;         /* messages the sleeper consumed */
bit sleeping;       /* the sleeper's word in memory */
bit sleeping_buffered; /* its announcement, still in its own buffer */
bool waiting;       /* blocked in futex_wait */

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
    :: visible > taken -> taken++          /* a message is there */
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
       atomic { if :: sleeping == 1 || sleeping_buffered -> waiting = true :: else -> skip fi };
#ifdef NAPS
       waiting = false;                    /* a nap ends by itself: look again */
#else
       (!waiting);
#endif
       atomic { sleeping = 0; sleeping_buffered = 0 };
again: skip
    od
}
