#!/bin/sh
# The two shm examples as a user runs them: both start orders, over a fresh
# name, over an object a finished run left behind with its stream unread,
# and over one a killed producer left mid-stream. prepare never drops a
# published message, so:
# - fresh name: the consumer reads exactly the producer's N lines, then CLOSED;
# - a finished run's unread stream (10 lines, closed): the consumer reads
#   those 10 lines, then CLOSED; the new producer is told CLOSED (its
#   stream would come after a close), and writes nothing;
# - a killed producer's unread lines: the consumer reads them and then the
#   new producer's N lines (appended after them), then CLOSED.
# Prints "shm examples: P passed, F failed".
B=${1:-examples/bin}
N=${2:-100000}
passed=0 failed=0

ok() { passed=$((passed + 1)); }
bad() { # case-name why
    failed=$((failed + 1))
    echo "  $1: FAILED ($2)"; sed 's/^/    /' "$B/shm_consumer.log" "$B/shm_producer.log"
}

check() { # case-name consumer-log
    read_lines=$(sed -n 's/.*read \([0-9]*\) lines, then the producer closed the stream.*/\1/p' "$2")
    case "$1" in
    "fresh name"*)
        [ "$read_lines" = "$N" ] && ok || bad "$1" "expected $N lines then CLOSED" ;;
    "stale object of a finished run"*)
        if [ "$read_lines" = 10 ] && grep -q "closed the stream" "$B/shm_producer.log"; then ok
        else bad "$1" "expected the 10 unread lines, then CLOSED, and CLOSED for the new producer"; fi ;;
    *)
        if [ -n "$read_lines" ] && [ "$read_lines" -gt "$N" ] &&
           grep -q "wrote $N lines" "$B/shm_producer.log"; then ok
        else bad "$1" "expected the unread lines and then $N more, then CLOSED"; fi ;;
    esac
}

consumer_first() { # name case
    "$B/shm_consumer" "$1" > "$B/shm_consumer.log" 2>&1 & c=$!
    sleep 0.3
    "$B/shm_producer" "$1" "$N" > "$B/shm_producer.log" 2>&1
    wait $c
    check "$2, consumer first" "$B/shm_consumer.log"
}

producer_first() { # name case
    "$B/shm_producer" "$1" "$N" > "$B/shm_producer.log" 2>&1 & p=$!
    sleep 0.3
    "$B/shm_consumer" "$1" > "$B/shm_consumer.log" 2>&1
    wait $p
    check "$2, producer first" "$B/shm_consumer.log"
}

leave_finished_run() { "$B/shm_producer" "$1" 10 > /dev/null 2>&1; }
leave_killed_run() {
    "$B/shm_producer" "$1" 100000000 > /dev/null 2>&1 & k=$!
    sleep 0.3; kill -9 $k; wait $k 2>/dev/null
}

# A consumer that comes after its producer finished (the stream is kept
# for it; it then removes the name).
consumer_alone() { # name case
    : > "$B/shm_producer.log"
    "$B/shm_consumer" "$1" > "$B/shm_consumer.log" 2>&1
    if grep -q "read 10 lines, then the producer closed the stream" "$B/shm_consumer.log"; then ok
    else bad "$2, consumer alone" "expected the 10 lines, then CLOSED"; fi
}

base=/shared_ring_test_$$
leave_finished_run "${base}_b_alone"
consumer_alone "${base}_b_alone" "stale object of a finished run"
for order in consumer_first producer_first; do
    $order "${base}_a_$order" "fresh name"
    leave_killed_run "${base}_c_$order"
    $order "${base}_c_$order" "stale object of a killed producer"
done
leave_finished_run "${base}_b_producer_first"
producer_first "${base}_b_producer_first" "stale object of a finished run"

# named_loop: two exec'd programs that share a ring and a notifier by name
# only (no descriptor passing); the consumer sleeps in epoll with no
# timeout, so messages, the close and a kill -9 must all reach it through
# its descriptors, and after a kill -9 the next producer's attach too.
named_bad() { failed=$((failed + 1)); echo "  named_loop, $1: FAILED"; sed 's/^/    /' "$B/named.log"; }
named_case() { # case-name expected-consumer-line expected-rc producer-args...
    what=$1 want=$2 want_rc=$3
    shift 3
    "$B/named_loop" consume "${base}_n" > "$B/named.log" 2>&1 & c=$!
    "$B/named_loop" produce "${base}_n" "$@" >> "$B/named.log" 2>&1 & p=$!
    # a watchdog: a wake-up or a death that never reached the loop fails
    # the case instead of hanging the suite
    (sleep 60; kill -9 $c $p 2>/dev/null) & w=$!
    if [ "${2:-}" = hold ]; then
        # kill it, then the next producer takes the side over and goes on
        # numbering where it stopped
        sleep 0.5
        kill -9 $p
        wait $p 2>/dev/null
        "$B/named_loop" produce "${base}_n" 500 after "$1" >> "$B/named.log" 2>&1 & p=$!
    fi
    wait $c; rc=$?
    wait $p 2>/dev/null
    kill $w 2>/dev/null
    if [ $rc -eq "$want_rc" ] && grep -q "consumer: $want" "$B/named.log" &&
       [ ! -e "/dev/shm${base}_n.consumer-wake" ]; then ok
    else named_bad "$what (rc $rc)"; fi
}
named_case "consumer and producer by name" \
    "read $N messages (0 producers died on the way), then the producer closed" 0 "$N"
named_case "producer killed, the next one taken in, consumer in epoll without a timer" \
    "read 1500 messages (1 producers died on the way), then the producer closed" 0 1000 hold
echo "shm examples: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
