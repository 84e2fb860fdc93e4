/* The lifecycle of a region (docs/protocol.md, "The lifecycle"), as a
   Promela model for spin. Four processes over one region: a producer P
   and a consumer C that both run the documented start-up (prepare, then
   attach, waiting while the region is not ready) in any order, and R and
   RC, which start the producer's and the consumer's programs again once P
   or C died. P or C may die between any two of their steps (one death per
   run), also in the middle of a format: a side still waiting to attach
   then runs prepare again (its wait times out, as docs/processes.md
   tells). Each load and each compare-and-swap of a control word is a step
   of its own. An attach refuses a region its claim finds unformatted. The
   judge of a word is exact here; the real one counts a process killed
   between its move and its identity slot alive for good (protocol.md,
   "The identity slot"), which the model leaves out.

   The consumer reads (a message handed over and released at once) or
   peeks (handed over, released by a later read or at the end), so its
   peek position can run ahead of read_pos, and it sets close_seen where
   its peek position reaches the close: records it has not released may
   still be there. prepare keeps a ring as the code's srng_holds_stream
   does: a record unreleased at read_pos, whatever close_seen says, or a
   close no consumer has seen. A consumer that dies with records
   unreleased leaves them to the next one, which gets them again
   (at-least-once).

   Checked (assertions and end states):
   - no live side is judged gone (C says PEER_GONE only of a producer that
     left or died);
   - no side is taken over, and no ring formatted, while its owner lives;
   - every message published before close is delivered, then CLOSED,
     never PEER_GONE; a format never drops an unreleased message or an
     unseen close;
   - the start-up in any order attaches without an error;
   - C never waits for ever (an end state with C blocked is invalid).

   Each rule of the protocol can be reverted with -D (see the Makefile's
   model target, which checks that each reversal makes spin fail):
   OLD_CAPTURE  a reader captures any owner word as its peer, and a word
                that goes to FREE is a departure (665abff: defect 1)
   OLD_ORDER    PEER_GONE without a fresh look at records and closed after
                the owner word (665abff: defect 3)
   OLD_RING     attach reads the ring id before its claim and refuses
                when it changed (665abff: defect 2)
   OLD_DROP     prepare formats a ring whose sides are gone even if it
                holds an unread stream (665abff: defect 9)
   NO_JUDGE     prepare takes an owner word without judging its owner
   OLD_SEEN     prepare judges a closed ring by close_seen alone, even
                with a record unreleased at read_pos (a consumer that
                peeked to the close died before it released) */

#define FREE 0
#define ATTACHED 0
#define CLAIMING 1
#define FORMATTING 2
#define WORD(pid, st) ((pid) * 4 + (st))
#define PID(w) ((w) / 4)
#define STATE(w) ((w) % 4)
#define IS_ATTACHED(w) ((w) != 0 && STATE(w) == ATTACHED)
#define SAME(a, b) (PID(a) == PID(b))

#define PROD 0
#define CONS 1
#define P_MSGS 2

byte owner[2];    /* the owner words */
bool magic;       /* the ring is formatted */
byte ring;        /* the ring id: a new one at every format */
byte wpos, rpos;  /* messages published, released */
bool closed, close_seen;
bool alive[5];    /* pids 1 (P), 2 (C), 3 (P again), 4 (C again) */

/* ghosts: what the checks compare with */
byte deaths;
byte published, delivered; /* delivered: how far into the ring any consumer handed over */
bool p_done, c_done;   /* P, C ran to their end */
byte holder[2];        /* the pid whose handle is attached as that side */
bool left[5];          /* the process detached */
bool closed_by[5];     /* the process closed the stream */

/* A process may die here, if no one has died yet. */
inline maybe_die() {
    if
    :: atomic { deaths == 0 -> deaths++; alive[me] = false;
                holder[side] = (holder[side] == me -> 0 : holder[side]) }; goto dead
    :: true
    fi
}

/* Take owner[s] for `want`: from FREE or from a dead owner. */
inline take(s, want, ok, live) {
    do
    :: cur = owner[s];
       if
#ifndef NO_JUDGE
       :: cur != 0 && alive[PID(cur)] -> live = cur; ok = false; break
#endif
       :: else ->
          atomic {
              if
              :: owner[s] == cur -> owner[s] = want; ok = true;
                 /* no takeover while the owner lives */
                 assert(cur == 0 || !alive[PID(cur)])
              :: else -> ok = false
              fi
          }
          if :: ok -> break :: else -> skip fi
       fi
    od
}

/* Is a stream there that a consumer has yet to read to its end? */
#ifdef OLD_SEEN
#define HOLDS_STREAM (magic && (closed -> !close_seen : rpos < wpos))
#else
#define HOLDS_STREAM (magic && (rpos < wpos || (closed && !close_seen)))
#endif

inline prepare() {
    kept = false;
    do
    :: take(PROD, WORD(me, FORMATTING), ok, live);
       if
       :: ok -> take(CONS, WORD(me, FORMATTING), ok, live);
          if
          :: ok -> break
          :: else -> owner[PROD] = FREE
          fi
       :: else -> skip
       fi;
       if
       /* a live prepare or attach in progress: wait until it ends */
       :: STATE(live) != ATTACHED ->
          (owner[PROD] == 0 || STATE(owner[PROD]) == ATTACHED || !alive[PID(owner[PROD])]) &&
          (owner[CONS] == 0 || STATE(owner[CONS]) == ATTACHED || !alive[PID(owner[CONS])])
       :: else -> kept = true; break /* in use: left as it is */
       fi
    od;
    if
    :: kept -> skip
    :: else ->
#ifdef OLD_DROP
    if :: true ->
#else
    if :: !HOLDS_STREAM ->
#endif
       atomic {
           /* no format while a side's owner lives, and no unreleased
              message or unseen close dropped */
           assert(holder[PROD] == 0 || !alive[holder[PROD]]);
           assert(holder[CONS] == 0 || !alive[holder[CONS]]);
           assert(rpos == wpos || !magic);
           assert(!closed || close_seen || !magic);
           magic = false
       };
       maybe_die(); /* in the middle of a format: its words judge it dead */
       atomic { ring++; wpos = 0; rpos = 0; closed = false; close_seen = false; published = 0; delivered = 0 };
       magic = true
    :: else -> skip
    fi;
    owner[PROD] = FREE;
    owner[CONS] = FREE
    fi
}

/* attach_*_wait as side s: wait while the region is not formatted or a
   live prepare holds the side; OK is the only other answer allowed. */
inline attach(s) {
    do
    :: magic ->
#ifdef OLD_RING
       my_ring = ring;
#endif
       take(s, WORD(me, CLAIMING), ok, live);
       if
       :: ok && magic -> break
       :: ok && !magic -> owner[s] = FREE /* formatted anew, or half: NOT_FORMATTED */
       :: else -> assert(STATE(live) == FORMATTING); /* start-up: no BUSY */
          (STATE(owner[s]) != FORMATTING || !alive[PID(owner[s])])
       fi
    :: !magic && (STATE(owner[PROD]) != FORMATTING || !alive[PID(owner[PROD])]) &&
                 (STATE(owner[CONS]) != FORMATTING || !alive[PID(owner[CONS])]) ->
       /* the process formatting the region died in the middle: the
          wait times out, and the start-up runs prepare again */
       prepare()
    od;
#ifdef OLD_RING
    /* the old attach compared the ring id it read before its claim */
    assert(my_ring == ring);
#endif
    my_ring = ring;
    owner[s] = WORD(me, ATTACHED);
    holder[s] = me
}

inline detach(s) {
    holder[s] = 0;
    left[me] = true;
    owner[s] = FREE
}

proctype Producer(byte me) {
    byte cur, live, my_ring, side = PROD, i;
    bool ok, kept;
    alive[me] = true;
    maybe_die();
    prepare();
    maybe_die();
    attach(PROD);
    i = 0;
    do
    :: i < P_MSGS && !closed ->
       maybe_die();
       atomic { assert(ring == my_ring); wpos++; published++ };
       i++
    :: else -> break
    od;
    maybe_die();
    atomic { closed = true; closed_by[me] = true };
    maybe_die();
    detach(PROD);
    if :: me == 1 -> p_done = true :: else -> skip fi;
dead: skip
}

/* R: the producer's program started again after P died unfinished. */
proctype Restart() {
end: (!alive[1] && !p_done);
    run Producer(3)
}

/* RC: the consumer's program started again after C died unfinished. */
proctype RestartConsumer() {
end: (!alive[2] && !c_done);
    run Consumer(4)
}

/* Is the producer's word w news to a consumer that knows `peer`? */
#ifdef OLD_CAPTURE
#define NEWS(w) ((w) != peer)
#else
#define NEWS(w) ((IS_ATTACHED(w) && (w) != peer) || (!IS_ATTACHED(w) && peer != 0 && !SAME(w, peer)))
#endif

proctype Consumer(byte me) {
    byte side = CONS, cur, live, my_ring, w, knew, polls;
    byte ppos;      /* the peek position: read_pos or ahead of it */
    byte peer;      /* the owner word of the producer it knows (0: none) */
    bool gone, told, ok, kept;
    alive[me] = true;
    maybe_die();
    prepare();
    maybe_die();
    attach(CONS);
    ppos = rpos;
    if :: me != 2 -> polls = 2 :: else -> skip fi; /* C again: waits only (a smaller model) */
    do
    :: maybe_die();
       /* a wait: until the next record, the close, news in the producer's
          word, or the death of the producer it knows; or (a few times) a
          call that does not wait, whatever is there */
       if
       :: (ppos < wpos || closed || NEWS(owner[PROD]) || (peer != 0 && !alive[PID(peer)] && !told))
       :: polls < 2 -> polls++
       /* C again, after a stream that ended for good: its wait times out */
       :: me != 2 && p_done && ppos == wpos && !closed -> goto finished
       fi;
       assert(ring == my_ring); /* never formatted under us */
       if
       :: ppos < wpos ->
          atomic { ppos++; if :: ppos > delivered -> delivered = ppos :: else -> skip fi };
          /* A peek matters to prepare once it can reach the close
             (close_seen); before the close, an unreleased record is one
             to keep either way. So C peeks only then, and C again only
             reads: a smaller model. */
          if
          :: rpos = ppos          /* a read: released with what was peeked before it */
          :: me == 2 && closed    /* a peek */
          fi;
          goto next
       :: else -> skip
       fi;
       if
       :: closed ->
          if
          :: ppos < wpos -> goto next
          :: else -> close_seen = true; /* where the peek position is */
             assert(delivered == published); /* all of it, then CLOSED */
             goto finished
          fi
       :: else -> skip
       fi;
       /* nothing now: what does the producer's word say? */
       w = owner[PROD];
       knew = peer;
       if
       :: NEWS(w) ->
#ifdef OLD_CAPTURE
          told = false; gone = (w == 0 && peer != 0); peer = w
#else
          if
          :: IS_ATTACHED(w) -> peer = w; gone = false; told = false
          :: else -> if :: !gone -> told = false :: else -> skip fi; gone = true; peer = 0
          fi
#endif
       :: else -> skip
       fi;
       if
       :: peer != 0 && !alive[PID(peer)] -> if :: !gone -> told = false :: else -> skip fi; gone = true
       :: else -> skip
       fi;
       if
       :: gone && !told ->
#ifndef OLD_ORDER
          if
          :: ppos < wpos || closed -> goto next /* what it left is read first */
          :: else -> skip
          fi;
#endif
          /* PEER_GONE: no live side judged gone, no close reported as gone */
          assert(knew == 0 || !alive[PID(knew)] || left[PID(knew)]);
          assert(knew == 0 || !closed_by[PID(knew)]);
          told = true
       :: else -> skip
       fi;
next: skip
    od;
finished:
    maybe_die(); /* before it released what it peeked */
    rpos = ppos;
    detach(CONS);
    c_done = true;
dead: skip
}

init {
    atomic {
        alive[1] = true; /* P and C are running from the start; R, RC once P, C died */
        alive[2] = true;
        run Producer(1);
        run Consumer(2);
        run Restart();
        run RestartConsumer()
    }
}
