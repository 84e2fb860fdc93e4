#!/bin/sh
# The two shm examples as a user runs them: both start orders, over a fresh
# name, over an object a finished run left behind (the 10 stale lines must
# not reach the new consumer), and over one a killed producer left mid-stream.
# Each case: the consumer must read exactly the N lines of the producer it
# ran with, and end with CLOSED. Prints "shm examples: P passed, F failed".
B=${1:-examples/bin}
N=${2:-100000}
passed=0 failed=0

check() { # case-name consumer-log
    if grep -q "read $N lines, then the producer closed the stream" "$2"; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "  $1: FAILED"; sed 's/^/    /' "$2" "$B/shm_producer.log"
    fi
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

base=/shared_ring_test_$$
for order in consumer_first producer_first; do
    $order "${base}_a_$order" "fresh name"
    leave_finished_run "${base}_b_$order"
    $order "${base}_b_$order" "stale object of a finished run"
    leave_killed_run "${base}_c_$order"
    $order "${base}_c_$order" "stale object of a killed producer"
done
echo "shm examples: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
