/* accel layouts: the notation round-trips, index math both ways on the
 * classic examples, and layout conversions as move lists that, applied to
 * per-PE memories, give exactly the destination layout. Run from the
 * repository root.
 */
#include "accel/layout.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static pfvm_accel_target tiny;

static int parse(const char *text, int rank, const int64_t *dims, pfvm_accel_layout *l)
{
    pfvm_status st;
    int rc = pfvm_accel_layout_parse(text, &tiny, rank, dims, l, &st);
    if (rc)
        fprintf(stderr, "  (%s)\n", st.msg);
    return rc == PFVM_OK;
}

/* The elements held by PE p (of the tiny target's 16) in offset order, -1
 * for nothing. */
static void block_of(const pfvm_accel_layout *l, int64_t pe, int64_t *out, int64_t n)
{
    int64_t c[PFVM_ACCEL_MAX_LEVELS], off, idx[PFVM_MAX_RANK];
    pfvm_accel_pe_coords(&tiny, pe, c);
    for (off = 0; off < n; off++) {
        if (pfvm_accel_layout_element(l, &tiny, c, off, idx)) {
            int64_t flat = 0;
            int a;
            for (a = 0; a < l->rank; a++)
                flat = flat * l->dims[a] + idx[a];
            out[off] = flat;
        } else {
            out[off] = -1;
        }
    }
}

static int same(const int64_t *a, const int64_t *b, int n)
{
    int i;
    for (i = 0; i < n; i++)
        if (a[i] != b[i])
            return 0;
    return 1;
}

static void check_classic(void)
{
    int64_t d12[1] = {12}, d46[2] = {4, 6}, got[6], c[PFVM_ACCEL_MAX_LEVELS], off, idx[2];
    static const int64_t block[4][3] = {{0, 1, 2}, {3, 4, 5}, {6, 7, 8}, {9, 10, 11}};
    static const int64_t cyclic[4][3] = {{0, 4, 8}, {1, 5, 9}, {2, 6, 10}, {3, 7, 11}};
    pfvm_accel_layout l;
    int p;
    /* 12 over the 4 PEs of group 0 of cluster 0, block and cyclic */
    CHECK(parse("pe:4*local:3", 1, d12, &l));
    CHECK(pfvm_accel_layout_local_elems(&l) == 3);
    for (p = 0; p < 4; p++) {
        block_of(&l, p, got, 3);
        CHECK_MSG(same(got, block[p], 3), "block PE %d: %lld %lld %lld", p, (long long)got[0], (long long)got[1],
                  (long long)got[2]);
    }
    block_of(&l, 4, got, 3); /* the next group holds nothing */
    CHECK(got[0] == -1 && got[1] == -1 && got[2] == -1);
    idx[0] = 7;
    pfvm_accel_layout_locate(&l, &tiny, idx, c, &off);
    CHECK(pfvm_accel_pe_number(&tiny, c) == 2 && off == 1);
    CHECK(parse("local:3*pe:4", 1, d12, &l));
    for (p = 0; p < 4; p++) {
        block_of(&l, p, got, 3);
        CHECK(same(got, cyclic[p], 3));
    }
    idx[0] = 7;
    pfvm_accel_layout_locate(&l, &tiny, idx, c, &off);
    CHECK(pfvm_accel_pe_number(&tiny, c) == 3 && off == 1);

    /* (4, 6), both axes split by 2 over a group's 4 PEs: PE (i/2)*2 + j/3,
     * offset (i%2)*3 + j%3 */
    CHECK(parse("pe:2*local:2, pe:2*local:3", 2, d46, &l));
    {
        int64_t i, j, ok = 1;
        for (i = 0; i < 4; i++)
            for (j = 0; j < 6; j++) {
                int64_t back[2];
                idx[0] = i;
                idx[1] = j;
                pfvm_accel_layout_locate(&l, &tiny, idx, c, &off);
                if (pfvm_accel_pe_number(&tiny, c) != (i / 2) * 2 + j / 3 || off != (i % 2) * 3 + j % 3)
                    ok = 0;
                if (!pfvm_accel_layout_element(&l, &tiny, c, off, back) || back[0] != i || back[1] != j)
                    ok = 0;
            }
        CHECK(ok);
    }
    /* the same split over two levels: rows over the 2 groups, columns over 2 PEs */
    CHECK(parse("group:2*local:2, pe:2*local:3", 2, d46, &l));
    idx[0] = 3;
    idx[1] = 4;
    pfvm_accel_layout_locate(&l, &tiny, idx, c, &off);
    CHECK(c[0] == 0 && c[1] == 0 && c[2] == 1 && c[3] == 1 && off == 4);
}

static void check_replication_padding(void)
{
    int64_t d12[1] = {12}, d10[1] = {10}, got[6], want[6];
    pfvm_accel_layout l;
    int p;
    /* halves on PEs 0 and 1, copied to PEs 2 and 3 */
    CHECK(parse("pe:2*local:6 | rep pe", 1, d12, &l));
    for (p = 0; p < 4; p++) {
        int i;
        block_of(&l, p, got, 6);
        for (i = 0; i < 6; i++)
            want[i] = (p % 2) * 6 + i;
        CHECK(same(got, want, 6));
    }
    /* whole tensor on every PE of the machine */
    CHECK(parse("local:12 | rep cluster group pe", 1, d12, &l));
    block_of(&l, 15, got, 3);
    CHECK(got[0] == 0 && got[2] == 2);
    /* 10 over 4 PEs in blocks of 3: PE 3 holds 9 and two padding places */
    CHECK(parse("pe:4*local:3", 1, d10, &l));
    block_of(&l, 3, got, 3);
    CHECK(got[0] == 9 && got[1] == -1 && got[2] == -1);
}

static void round_trip(const char *text, int rank, const int64_t *dims)
{
    pfvm_accel_layout l, m;
    char buf[256];
    if (!parse(text, rank, dims, &l)) {
        CHECK_MSG(0, "'%s' does not parse", text);
        return;
    }
    pfvm_accel_layout_format(&l, &tiny, buf, sizeof buf);
    CHECK_MSG(!strcmp(buf, text), "'%s' prints as '%s'", text, buf);
    CHECK(parse(buf, rank, dims, &m) && !memcmp(&l, &m, sizeof l));
}

static void bad(const char *text, int rank, const int64_t *dims, const char *what)
{
    pfvm_status st;
    pfvm_accel_layout l;
    pfvm_code rc = pfvm_accel_layout_parse(text, &tiny, rank, dims, &l, &st);
    CHECK_MSG(rc != PFVM_OK && strstr(st.msg, what), "'%s': got '%s', want '%s'", text, rc ? st.msg : "ok", what);
}

static void check_notation(void)
{
    int64_t d12[1] = {12}, d46[2] = {4, 6}, d3[3] = {2, 8, 5};
    round_trip("pe:4*local:3", 1, d12);
    round_trip("local:3*pe:4", 1, d12);
    round_trip("cluster:2*group:2*local:3", 1, d12);
    round_trip("local:2*pe:2*local:3 | rep group", 1, d12);
    round_trip("pe:2*local:2, pe:2*local:3", 2, d46);
    round_trip("local:2, cluster:2*local:4, pe:4*local:2 | rep group", 3, d3);
    round_trip("-", 0, NULL);
    bad("pe:4*local:2", 1, d12, "multiply to 8, below its size 12");
    bad("pe:8*local:2", 1, d12, "level pe gets 8 instances, its fan-out is 4");
    bad("pe:2*local:2, pe:4*local:3", 2, d46, "level pe gets 8 instances");
    bad("l1b:4*local:3", 1, d12, "expected local:N or LEVEL:N (a level of the target) at 'l1b:4'");
    bad("pe4*local:3", 1, d12, "expected local:N or LEVEL:N");
    bad("pe:*local:3", 1, d12, "expected ':N'");
    bad("pe:0*local:12", 1, d12, "factor out of range");
    bad("pe:4*local:3", 2, d46, "expected ','");
    bad("pe:4*local:3, local:6", 1, d12, "more axes than the tensor's rank");
    bad("local:12 | rep pe pe", 1, d12, "level replicated twice");
    bad("local:12 | rep mab", 1, d12, "not a level of the target to replicate over: 'mab'");
    bad("local:12 | copy pe", 1, d12, "expected 'rep LEVEL...'");
    bad("local:12 ]", 1, d12, "unexpected text at ']'");
    bad("local:1*local:1*local:1*local:1*local:1*local:1*local:12", 1, d12, "more than 6 factors");
    bad("local:1", 0, NULL, "a scalar's layout is '-'");
}

/* Applies a conversion's moves to per-PE memories filled from src and
 * checks that every place of dst holds its element (and only dst's places
 * were written). Returns the number of moves. */
static int convert(const char *from, const char *to, int rank, const int64_t *dims)
{
    pfvm_accel_layout s, d;
    pfvm_accel_move *moves = NULL;
    size_t count = 0;
    pfvm_status st;
    int64_t npes = pfvm_accel_target_pes(&tiny), ns, nd, pe, i, j;
    int64_t *src, *dst, *want;
    int ok = 1, n;
    if (!parse(from, rank, dims, &s) || !parse(to, rank, dims, &d)) {
        CHECK_MSG(0, "%s -> %s: a layout does not parse", from, to);
        return -1;
    }
    ns = pfvm_accel_layout_local_elems(&s);
    nd = pfvm_accel_layout_local_elems(&d);
    src = (int64_t *)malloc(sizeof *src * (size_t)(npes * ns));
    dst = (int64_t *)malloc(sizeof *dst * (size_t)(npes * nd));
    want = (int64_t *)malloc(sizeof *want * (size_t)(npes * nd));
    for (pe = 0; pe < npes; pe++) {
        block_of(&s, pe, src + pe * ns, ns);
        block_of(&d, pe, want + pe * nd, nd);
        for (i = 0; i < nd; i++)
            dst[pe * nd + i] = -1;
    }
    CHECK_MSG(pfvm_accel_moves(&tiny, &s, &d, &moves, &count, &st) == PFVM_OK, "%s", st.msg);
    n = (int)count;
    for (i = 0; i < n; i++) {
        const pfvm_accel_move *m = &moves[i];
        for (j = 0; j < m->count; j++) {
            int64_t v = src[m->src_pe * ns + m->src_off + j];
            if (v < 0 || dst[m->dst_pe * nd + m->dst_off + j] != -1)
                ok = 0; /* read of an empty place, or a place written twice */
            dst[m->dst_pe * nd + m->dst_off + j] = v;
        }
    }
    CHECK_MSG(ok && same(dst, want, (int)(npes * nd)), "%s -> %s", from, to);
    pfvm_accel_moves_free(moves);
    free(src);
    free(dst);
    free(want);
    return n;
}

static void check_conversions(void)
{
    int64_t d12[1] = {12}, d46[2] = {4, 6}, d10[1] = {10};
    pfvm_accel_layout b, c;
    pfvm_accel_move *moves = NULL;
    size_t count = 0;
    double up[PFVM_ACCEL_MAX_LEVELS], down[PFVM_ACCEL_MAX_LEVELS];
    /* block -> cyclic: 12 single elements (nothing is contiguous on both sides) */
    CHECK(convert("pe:4*local:3", "local:3*pe:4", 1, d12) == 12);
    /* identity: one local copy per PE */
    CHECK(convert("pe:4*local:3", "pe:4*local:3", 1, d12) == 4);
    CHECK(convert("pe:2*local:2, pe:2*local:3", "local:4, pe:4*local:2", 2, d46) > 0);
    CHECK(convert("pe:2*local:2, pe:2*local:3", "group:2*local:2, cluster:2*local:3", 2, d46) > 0);
    CHECK(convert("local:4, local:6", "pe:2*local:2, pe:2*local:3 | rep group cluster", 2, d46) == 16 * 2);
    CHECK(convert("pe:2*local:6 | rep pe group", "local:3*cluster:2*group:2", 1, d12) > 0);
    CHECK(convert("pe:4*local:3", "local:10 | rep pe", 1, d10) == 4 * 4);
    /* traffic: block -> cyclic inside one group crosses only the PE links */
    CHECK(parse("pe:4*local:3", 1, d12, &b) && parse("local:3*pe:4", 1, d12, &c));
    CHECK(pfvm_accel_moves(&tiny, &b, &c, &moves, &count, NULL) == PFVM_OK);
    pfvm_accel_moves_traffic(&tiny, moves, count, 4, up, down);
    CHECK(up[3] == 4 * 8 && down[3] == 4 * 8 && up[2] == 0 && up[1] == 0);
    pfvm_accel_moves_free(moves);
    /* the same over the two clusters: 6 elements change cluster and cross
     * every link below the root */
    CHECK(parse("cluster:2*local:6", 1, d12, &b) && parse("local:6*cluster:2", 1, d12, &c));
    CHECK(pfvm_accel_moves(&tiny, &b, &c, &moves, &count, NULL) == PFVM_OK);
    pfvm_accel_moves_traffic(&tiny, moves, count, 4, up, down);
    CHECK(up[1] == 4 * 6 && up[2] == 4 * 6 && up[3] == 4 * 6 && up[0] == 0);
    pfvm_accel_moves_free(moves);
    CHECK(parse("local:10", 1, d10, &b) && parse("pe:4*local:3", 1, d12, &c));
    CHECK(pfvm_accel_moves(&tiny, &b, &c, &moves, &count, NULL) == PFVM_ERR_INVALID && moves == NULL && count == 0);
}

int main(void)
{
    pfvm_status st;
    if (pfvm_accel_target_load("targets/tiny.txt", &tiny, &st)) {
        fprintf(stderr, "%s\n", st.msg);
        return 1;
    }
    check_classic();
    check_replication_padding();
    check_notation();
    check_conversions();
    return CHECK_END();
}
