%% Shared helpers for the two-node Erlang/OTP peers (remote_pingpong,
%% remote_stream, remote_down; see bench/peers/README.md). Both nodes are
%% started by run_remote.sh: the peer node runs serve/1, the measuring node
%% runs one benchmark's main/1 with the peer's node name as first argument.
-module(bench_remote).
-export([serve/1, main/4, connect/1, peak_rss_kb/1, wait_ms/0]).

%% How long any one wait for a message from the other node may take before
%% the run counts as failed (a stuck run fails, it does not hang).
wait_ms() -> 10000.

%% The peer node: stays up while the measuring node is connected, halts
%% when it goes (nodedown), and in any case after MaxSeconds, so a peer
%% whose measuring node never came or vanished does not live on.
serve([MaxS]) ->
    Max = list_to_integer(MaxS),
    ok = net_kernel:monitor_nodes(true),
    erlang:send_after(Max * 1000, self(), give_up),
    serve_loop(Max).

serve_loop(Max) ->
    receive
        {nodeup, _} -> serve_loop(Max);
        {nodedown, _} -> erlang:halt(0);
        give_up ->
            io:format(standard_error, "bench_remote: peer ~s gives up after ~B s~n",
                      [node(), Max]),
            erlang:halt(3)
    end.

%% main(Name, Usage, [PeerNode | Args], Fun): bench_peer:run over Args,
%% whose Fun connects to PeerNode and calls Fun(Peer, Ints).
main(Name, Usage, [PeerS | Args], Fun) ->
    bench_peer:run(Name, Usage, Args,
                   fun(Ints) -> Fun(connect(PeerS), Ints) end);
main(Name, Usage, [], _Fun) ->
    io:format(standard_error, "usage: ~s PEER_NODE ~s~n", [Name, Usage]),
    erlang:halt(2).

%% Connects to the peer node (retrying for up to 30 s: it may still be
%% starting) and checks that it can load the benchmark modules.
connect(PeerS) ->
    Peer = list_to_atom(PeerS),
    Peer =/= node() orelse die("the peer node is this node", []),
    connect(Peer, erlang:monotonic_time(millisecond) + 30000),
    [{module, M} = rpc:call(Peer, code, ensure_loaded, [M], wait_ms())
     || M <- [bench_peer, bench_remote]],
    Peer.

connect(Peer, Deadline) ->
    case net_kernel:connect_node(Peer) of
        true -> ok;
        _ ->
            erlang:monotonic_time(millisecond) < Deadline orelse
                die("cannot connect to ~s within 30 s", [Peer]),
            timer:sleep(50),
            connect(Peer, Deadline)
    end.

die(Fmt, Args) ->
    io:format(standard_error, "bench_remote: " ++ Fmt ++ "~n", Args),
    erlang:halt(2).

%% The larger of the two nodes' peak RSS (VmHWM of each beam.smp).
peak_rss_kb(Peer) ->
    Remote = case rpc:call(Peer, bench_peer, peak_rss_kb, [], wait_ms()) of
                 Kb when is_integer(Kb) -> Kb;
                 Other -> bench_peer:fail("peer's RSS: ~p", [Other])
             end,
    max(bench_peer:peak_rss_kb(), Remote).
