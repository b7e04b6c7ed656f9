/*
 * frame_check.h — what must hold for any bytes a peer sends, read as a node
 * batch (runtime/node/frame.h): the reader never reads past the input, every
 * record it returns lies inside it, the records add up to the header's
 * count when it says the batch is well formed, and the record parsers
 * (HELLO, MSG, ACK) return only fields inside their record. Used by the
 * libFuzzer target (fuzz_frame.c) and by make test, which replays the
 * corpus it found (tests/runtime/test_node.c).
 */
#ifndef TESTS_FUZZ_FRAME_CHECK_H
#define TESTS_FUZZ_FRAME_CHECK_H

#include "node/frame.h"

#include <stdlib.h>
#include <string.h>

/* 0 when every property holds; the number of the first that fails. */
static inline int frame_check(const uint8_t *data, size_t size)
{
    ac__frame_reader r;
    ac__frame_header h;
    if (!ac__frame_open(&r, data, size, &h))
        return 0;  /* refused: nothing more to check */
    if (size < AC__FRAME_HEADER_SIZE || h.from_node == 0 || h.seq == 0)
        return 1;
    unsigned seen = 0;
    ac__record rec;
    int got;
    while ((got = ac__frame_next(&r, &rec)) > 0) {
        seen++;
        if (rec.body < data || rec.body + rec.len > data + size)
            return 2;
        char name[AC_NODE_NAME_MAX + 1];
        if (ac__frame_get_hello(&rec, name) &&
            (strlen(name) == 0 || strlen(name) > AC_NODE_NAME_MAX || rec.op != AC__OP_HELLO))
            return 3;
        uint64_t seq, records;
        if (ac__frame_get_ack(&rec, &seq, &records) &&
            (rec.op != AC__OP_ACK || rec.len != AC__ACK_BODY_SIZE))
            return 7;
        ac__msg m;
        if (ac__frame_get_msg(&rec, &m) &&
            (m.payload < rec.body || m.payload + m.len != rec.body + rec.len ||
             m.tag >= AC_TAG_SYSTEM || rec.op != AC__OP_MSG))
            return 4;
    }
    if (got == 0 && (seen != h.records || r.in.pos != size))
        return 5;  /* "well formed" must mean exactly that */
    if (seen > h.records)
        return 6;
    return 0;
}

#endif
