%% remote_stream N BYTES — Erlang/OTP peer of actorc's remote one-way stream
%% (see bench/peers/README.md). A sender on the peer node sends N messages,
%% each a BYTES-byte binary (BYTES >= 8) whose first 8 bytes are its
%% sequence number (little-endian), to a receiver on the measuring node,
%% then {sent, Count}. Timed on the receiver's node, from the `go` sent to
%% the sender until the receiver has the end marker. Messages counted: N.
%% Verified: the receiver got exactly the Count the sender sent, Count = N,
%% every message of BYTES bytes and in order (sequence number = position).
-module(remote_stream).
-export([main/1, sender/3]).

main(Args) ->
    bench_remote:main("remote_stream", "N BYTES", Args,
                      fun(Peer, [N, Bytes]) -> bench(Peer, N, Bytes) end).

bench(Peer, N, Bytes) ->
    Bytes >= 8 orelse
        begin io:format(standard_error, "remote_stream: BYTES must be at least 8~n", []),
              erlang:halt(2) end,
    Self = self(),
    %% The sender can outrun the receiver: keep its mailbox off the heap, as
    %% in fanin, so collections do not scan it.
    Receiver = spawn_opt(fun() -> receiver(Bytes, 0, 0, Self) end,
                         [{message_queue_data, off_heap}]),
    Sender = spawn(Peer, ?MODULE, sender, [Receiver, N, Bytes]),
    T0 = bench_peer:now_ns(),
    Sender ! go,
    {Got, Sent, Bad} = receive {done, G, S, B} -> {G, S, B} end,
    Ns = bench_peer:now_ns() - T0,
    Got =:= Sent andalso Sent =:= N andalso Bad =:= 0 orelse
        bench_peer:fail("received ~B, sender sent ~B, expected ~B; ~B out of order or of the wrong size",
                        [Got, Sent, N, Bad]),
    bench_peer:report("remote_stream", [N, Bytes], Ns, N,
                      bench_remote:peak_rss_kb(Peer)).

sender(Receiver, N, Bytes) ->
    receive
        go ->
            Pad = binary:copy(<<$x>>, Bytes - 8),
            send(Receiver, 0, N, Pad, 0)
    after 600000 -> ok
    end.

%% Sent counts the sends made, apart from the sequence number.
send(Receiver, N, N, _Pad, Sent) ->
    Receiver ! {sent, Sent};
send(Receiver, Seq, N, Pad, Sent) ->
    Receiver ! <<Seq:64/little, Pad/binary>>,
    send(Receiver, Seq + 1, N, Pad, Sent + 1).

receiver(Bytes, Got, Bad, Reporter) ->
    receive
        <<Seq:64/little, _/binary>> = M ->
            Ok = Seq =:= Got andalso byte_size(M) =:= Bytes,
            receiver(Bytes, Got + 1, case Ok of true -> Bad; false -> Bad + 1 end,
                     Reporter);
        {sent, Sent} ->
            Reporter ! {done, Got, Sent, Bad}
    after bench_remote:wait_ms() ->
        Reporter ! {done, Got, -1, Bad}
    end.
