/* accel targets: the shipped files parse, the printer round-trips, and
 * every kind of bad file gets one error naming its line. Run from the
 * repository root. */
#include "accel/target.h"

#include <stdio.h>
#include <string.h>

#include "check.h"

static void check_shipped(void)
{
    pfvm_status st;
    pfvm_accel_target t, u;
    char buf[2048];
    CHECK_MSG(pfvm_accel_target_load("targets/mncore2.txt", &t, &st) == PFVM_OK, "%s", st.msg);
    CHECK(!strcmp(t.name, "mncore2"));
    CHECK(t.nlevels == 6);
    CHECK(pfvm_accel_target_pes(&t) == 4096);
    CHECK(pfvm_accel_target_level(&t, "l1b") == 3);
    CHECK(t.levels[3].mem_bytes == 64 * 1024);
    CHECK(t.levels[1].mem_bytes == 4 * 1024 * 1024);
    CHECK(t.levels[0].mem_bytes == (int64_t)4 * 1024 * 1024 * 1024);
    CHECK(t.levels[5].mem_bytes == 32 * 1024);
    CHECK(t.levels[4].broadcast && t.levels[4].reduce);
    CHECK(pfvm_accel_target_instances(&t, 3) == 64);
    CHECK(pfvm_accel_target_macs(&t, PFVM_FLOAT) == 8);
    CHECK(pfvm_accel_target_macs(&t, PFVM_INT8) == 0);
    /* format -> parse gives the same target */
    CHECK(pfvm_accel_target_format(&t, buf, sizeof buf) < sizeof buf);
    CHECK_MSG(pfvm_accel_target_parse(buf, "formatted", &u, &st) == PFVM_OK, "%s", st.msg);
    CHECK(!memcmp(&t, &u, sizeof t));
    CHECK(pfvm_accel_target_format(&t, buf, 10) > 10 && strlen(buf) == 9);

    CHECK_MSG(pfvm_accel_target_load("targets/tiny.txt", &t, &st) == PFVM_OK, "%s", st.msg);
    CHECK(pfvm_accel_target_pes(&t) == 16);
    CHECK(t.levels[3].broadcast && !t.levels[3].reduce);
    CHECK(t.simd == 4);
}

/* A bad file: an error of the given code whose message starts with
 * "bad:LINE: " and contains `what`. */
static void bad(const char *text, int line, const char *what)
{
    pfvm_status st;
    pfvm_accel_target t;
    char prefix[32];
    pfvm_code rc = pfvm_accel_target_parse(text, "bad", &t, &st);
    snprintf(prefix, sizeof prefix, "bad:%d: ", line);
    CHECK_MSG(rc == PFVM_ERR_PARSE, "no error for line %d (%s)", line, what);
    if (rc == PFVM_ERR_PARSE)
        CHECK_MSG(!strncmp(st.msg, prefix, strlen(prefix)) && strstr(st.msg, what), "got '%s', want '%s...%s'",
                  st.msg, prefix, what);
}

#define HEAD "target x\nlevel root fanout 1 mem 1M\n"
#define PE "pe simd 4 mac float 4\n"

static void check_bad_files(void)
{
    pfvm_status st;
    pfvm_accel_target t;
    CHECK(pfvm_accel_target_parse(HEAD "level pe fanout 4 mem 1K down 4 up 4\n" PE, "ok", &t, &st) == PFVM_OK);
    bad("", 0, "empty target");
    bad("# nothing\n\n", 2, "empty target");
    bad("level a fanout 1 mem 1\n", 1, "first line must be 'target NAME'");
    bad("target\n", 1, "target needs one name");
    bad("target a b\n", 1, "target needs one name");
    bad("target 9x\n", 1, "target needs one name");
    bad("target x\ntarget y\n", 2, "second target line");
    bad(HEAD "frob 1\n", 3, "unknown directive");
    bad(HEAD "level pe fanout 4 mem 1K down 4 up 4 speed 9\n" PE, 3, "unknown level key (fanout, mem, down, up, broadcast, reduce) 'speed'");
    bad(HEAD "level pe fanout 0 mem 1K down 4 up 4\n" PE, 3, "fanout must be an integer");
    bad(HEAD "level pe fanout 2.5 mem 1K down 4 up 4\n" PE, 3, "fanout must be an integer");
    bad(HEAD "level pe fanout 4 mem 1X down 4 up 4\n" PE, 3, "mem must be a byte count");
    bad(HEAD "level pe fanout 4 mem -1 down 4 up 4\n" PE, 3, "mem must be a byte count");
    bad(HEAD "level pe fanout 4 mem 1K down -4 up 4\n" PE, 3, "bytes per cycle");
    bad(HEAD "level pe fanout 4 mem 1K down 4\n" PE, 3, "needs down and up");
    bad(HEAD "level pe fanout 4 mem 1K down 4 up\n" PE, 3, "missing value after 'up'");
    bad(HEAD "level pe fanout 4 down 4 up 4\n" PE, 3, "level without mem");
    bad(HEAD "level root fanout 4 mem 1K down 4 up 4\n" PE, 3, "duplicate level name 'root'");
    bad(HEAD "level local fanout 4 mem 1K down 4 up 4\n" PE, 3, "'local' is reserved");
    bad("target x\nlevel root fanout 2 mem 1M\n", 2, "root) level must have fanout 1");
    bad(HEAD PE, 3, "pe line before two levels");
    bad(HEAD "level pe fanout 4 mem 0 down 4 up 4\n" PE, 4, "needs mem above 0");
    bad(HEAD "level pe fanout 4 mem 1K down 4 up 4\npe simd 4\n", 4, "without a mac rate");
    bad(HEAD "level pe fanout 4 mem 1K down 4 up 4\npe mac float 4\n", 4, "without simd");
    bad(HEAD "level pe fanout 4 mem 1K down 4 up 4\npe simd 4 mac floaty 4\n", 4, "unknown dtype 'floaty'");
    bad(HEAD "level pe fanout 4 mem 1K down 4 up 4\npe simd 4 mac float 4 mac float 2\n", 4, "second mac rate");
    bad(HEAD "level pe fanout 4 mem 1K down 4 up 4\npe simd 4 mac float 0\n", 4, "mac rate must be");
    bad(HEAD "level pe fanout 4 mem 1K down 4 up 4\n" PE PE, 5, "second pe line");
    bad(HEAD "level pe fanout 4 mem 1K down 4 up 4\n" PE "level z fanout 2 mem 1 down 1 up 1\n", 5, "level after the pe line");
    bad(HEAD "level pe fanout 4 mem 1K down 4 up 4\n", 3, "missing pe line");
    bad(HEAD "level a1 fanout 1 mem 1 down 1 up 1\nlevel a2 fanout 1 mem 1 down 1 up 1\n"
             "level a3 fanout 1 mem 1 down 1 up 1\nlevel a4 fanout 1 mem 1 down 1 up 1\n"
             "level a5 fanout 1 mem 1 down 1 up 1\nlevel a6 fanout 1 mem 1 down 1 up 1\n"
             "level a7 fanout 1 mem 1 down 1 up 1\nlevel a8 fanout 1 mem 1 down 1 up 1\n",
        10, "more than 8 levels");
    CHECK(pfvm_accel_target_load("tests/no/such/target.txt", &t, &st) == PFVM_ERR_IO &&
          strstr(st.msg, "tests/no/such/target.txt"));
    CHECK(pfvm_accel_target_parse(NULL, "null", &t, &st) == PFVM_ERR_INVALID);
}

int main(void)
{
    check_shipped();
    check_bad_files();
    return CHECK_END();
}
