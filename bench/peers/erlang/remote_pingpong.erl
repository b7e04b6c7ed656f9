%% remote_pingpong N — Erlang/OTP peer of actorc's remote ping-pong (see
%% bench/peers/README.md): the pingpong benchmark with the ponger on the
%% other node. The pinger (on the measuring node) sends {ping, self()}, the
%% ponger (spawned on the peer node) answers pong; one message in flight,
%% N round trips. Reported: round trips per second (N / seconds; not 2N as
%% in the one-node pingpong). Verified: the pinger counted N pongs and the
%% ponger counted N pings.
-module(remote_pingpong).
-export([main/1, ponger/1]).

main(Args) ->
    bench_remote:main("remote_pingpong", "N", Args,
                      fun(Peer, [N]) -> bench(Peer, N) end).

bench(Peer, N) ->
    Self = self(),
    Ponger = spawn(Peer, ?MODULE, ponger, [0]),
    Pinger = spawn(fun() -> receive go -> pinger(Ponger, N, 0, Self) end end),
    T0 = bench_peer:now_ns(),
    Pinger ! go,
    Pongs = receive {done, C} -> C end,
    Ns = bench_peer:now_ns() - T0,
    Ponger ! {count, self()},
    Pings = receive {pings, P} -> P
            after bench_remote:wait_ms() -> bench_peer:fail("the ponger did not answer", [])
            end,
    Pongs =:= N andalso Pings =:= N orelse
        bench_peer:fail("pinger counted ~B pongs, ponger ~B pings, expected ~B",
                        [Pongs, Pings, N]),
    bench_peer:report("remote_pingpong", [N], Ns, N,
                      bench_remote:peak_rss_kb(Peer)).

ponger(Pings) ->
    receive
        {ping, From} -> From ! pong, ponger(Pings + 1);
        {count, From} -> From ! {pings, Pings}
    after 600000 -> ok
    end.

pinger(_Ponger, N, N, Reporter) ->
    Reporter ! {done, N};
pinger(Ponger, N, Pongs, Reporter) ->
    Ponger ! {ping, self()},
    receive
        pong -> pinger(Ponger, N, Pongs + 1, Reporter)
    after bench_remote:wait_ms() ->
        Reporter ! {done, Pongs}
    end.
