#!/usr/bin/env bash
# netns.sh — two clusternode processes (tests/cluster/node) in two network
# namespaces joined by a veth pair, with the node defaults (heartbeat
# 200 ms, timeout 800 ms):
#   1. a cut link (one end set down) is seen down on both sides within
#      1 s, and the link comes back by itself once the end is up again;
#   2. a slow link (tbf, 1 Mbit/s each way) carrying traffic both ways is
#      not declared down for 10 s, and what it carried arrived in order.
# Needs root and `ip netns`; where either is missing it says why and
# exits 0. Every wait is bounded; the namespaces, the processes and the
# files go away on any exit (the trap).
#
#   tests/cluster/netns.sh CLUSTERNODE KEYGEN      (make test-netns)
set -euo pipefail

node_bin=$(realpath "$1")
keygen=$(realpath "$2")
detect_ms=1000     # the issue's guarantee
slow_s=10          # how long the slow link must stay up
# Items each side sends every 100 ms on the slow link: about 62 bytes
# each on the wire, so some 0.7 Mbit/s of its 1 Mbit/s. A link given more
# than it carries queues seconds of bytes ahead of the pings, the case
# docs/NODES.md tells users to raise timeout_ms for.
burst=150

skip() { echo "netns: skipped: $*"; exit 0; }
fail() { echo "netns: FAILED: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || skip "not root"
command -v ip > /dev/null && command -v tc > /dev/null || skip "no ip or tc command"

tag=acn$$
ns_a=${tag}a ns_b=${tag}b
dir=$(mktemp -d /tmp/actorc-netns-XXXXXX)
declare -A PID IN OUT

cleanup() {
    for n in "${!PID[@]}"; do
        kill -9 "${PID[$n]}" 2> /dev/null || true
        wait "${PID[$n]}" 2> /dev/null || true
    done
    ip netns del "$ns_a" 2> /dev/null || true
    ip netns del "$ns_b" 2> /dev/null || true
    rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

ip netns add "$ns_a" 2> /dev/null || skip "ip netns add does not work here"
ip netns add "$ns_b"
ip link add "${tag}va" type veth peer name "${tag}vb" 2> /dev/null || skip "no veth here"
ip link set "${tag}va" netns "$ns_a"
ip link set "${tag}vb" netns "$ns_b"
ip -n "$ns_a" addr add 10.77.0.1/24 dev "${tag}va"
ip -n "$ns_b" addr add 10.77.0.2/24 dev "${tag}vb"
for ns in "$ns_a" "$ns_b"; do ip -n "$ns" link set lo up; done
ip -n "$ns_a" link set "${tag}va" up
ip -n "$ns_b" link set "${tag}vb" up

# Private namespaces: nothing else listens there, so fixed ports are safe.
echo "alpha tcp://10.77.0.1:7101 $("$keygen" "$dir/alpha.key")" > "$dir/cluster"
echo "beta tcp://10.77.0.2:7102 $("$keygen" "$dir/beta.key")" >> "$dir/cluster"

# start NAME NS: the node NAME in namespace NS, spoken to through two FIFOs.
start() {
    mkfifo "$dir/$1.in" "$dir/$1.out"
    ip netns exec "$2" "$node_bin" "$1" "$dir/cluster" "$dir/$1.key" \
        < "$dir/$1.in" > "$dir/$1.out" &
    PID[$1]=$!
    local in out
    exec {in}> "$dir/$1.in"
    exec {out}< "$dir/$1.out"
    IN[$1]=$in OUT[$1]=$out
    read -r -t 10 -u "$out" line || fail "$1 did not start"
    [[ $line == ready* ]] || fail "$1: $line"
    eval "READY_$1=\$line"
}

# send NAME COMMAND; reply NAME SECONDS: the answer in $reply, which must be "ok".
send() { echo "$2" >&"${IN[$1]}"; }
reply() {
    read -r -t "$2" -u "${OUT[$1]}" reply || fail "$1 did not answer within $2 s"
    [[ $reply == ok* ]] || fail "$1: $reply"
}
cmd() { send "$1" "$2"; reply "$1" 15; }
# field KEY: KEY's value in $reply.
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<< "$reply"; }
station0() { local r; eval "r=\$READY_$1"; sed -n 's/.* s0=\([^ ]*\).*/\1/p' <<< "$r"; }

# seen STATE T0 WHAT: both nodes wait at once for the other to be STATE;
# each must see it within detect_ms of T0 (µs, CLOCK_MONOTONIC).
seen() {
    send alpha "await beta $1 10000"
    send beta "await alpha $1 10000"
    for n in alpha beta; do
        reply "$n" 15
        local ms=$(( ($(field at) - $2) / 1000 ))
        echo "netns: $n sees the other $1 $ms ms after the link was $3"
        [ "$1" = up ] || [ "$ms" -lt "$detect_ms" ] || fail "$n: $ms ms (limit $detect_ms ms)"
    done
}

start alpha "$ns_a"
start beta "$ns_b"
cmd alpha "await beta up 10000"
cmd beta "await alpha up 10000"

echo "netns: 1. a cut link"
cmd alpha now
t0=$(field at)
ip -n "$ns_a" link set "${tag}va" down
seen down "$t0" cut
cmd alpha now
t1=$(field at)
ip -n "$ns_a" link set "${tag}va" up
seen up "$t1" "restored"
cmd alpha "peer beta"
[ "$(field losses)" = 1 ] || fail "alpha lost beta $(field losses) times"

echo "netns: 2. a slow link carrying traffic, for $slow_s s"
for pair in "$ns_a ${tag}va" "$ns_b ${tag}vb"; do
    set -- $pair
    tc -n "$1" qdisc add dev "$2" root tbf rate 1mbit burst 32kbit latency 400ms ||
        skip "no tbf qdisc here (the cut link passed)"
done
cmd alpha "peer beta"
losses=$(field losses)
a_to_b=$(station0 beta)
b_to_a=$(station0 alpha)
end=$((SECONDS + slow_s))
while [ "$SECONDS" -lt "$end" ]; do
    cmd alpha "burst 0 $a_to_b 1 $burst"
    cmd beta "burst 0 $b_to_a 2 $burst"
    sleep 0.1
done
for n in alpha beta; do
    other=$([ "$n" = alpha ] && echo beta || echo alpha)
    cmd "$n" "peer $other"
    [ "$(field up)" = 1 ] && [ "$(field losses)" = "$losses" ] ||
        fail "$n declared $other down on a slow link: $reply"
    echo "netns: $n: $reply"
done
# What was accepted arrives, in order, once the queues drain.
for pair in "alpha beta 2" "beta alpha 1"; do
    set -- $pair
    cmd "$2" "report 0 0"
    sent=$(field accepted)
    for _ in $(seq 300); do
        cmd "$1" "report 0 $3"
        [ "$(field got)" -ge "$sent" ] && break
        sleep 0.1
    done
    [ "$(field got)" = "$sent" ] && [ "$(field violations)" = 0 ] && [ "$(field gaps)" = 0 ] ||
        fail "$1 got $(field got) of $sent: $reply"
done

cmd alpha "stats"
echo "netns: alpha: $reply"
for n in alpha beta; do
    send "$n" quit
    reply "$n" 15
    wait "${PID[$n]}" || fail "$n exited $?"
    unset "PID[$n]"
done
echo "netns: passed"
