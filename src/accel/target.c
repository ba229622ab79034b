/* accel target: the text format's parser and printer (see target.h). */
#include "target.h"

#include <stdio.h>
#include <stdlib.h>

#define ACCEL_MAX_TOKENS 32
#define ACCEL_LINE 512

/* One line split into whitespace-separated tokens, comments dropped. */
typedef struct accel_line {
    char buf[ACCEL_LINE];
    char *tok[ACCEL_MAX_TOKENS];
    int n;
} accel_line;

typedef struct accel_parser {
    const char *source;
    int line;
    pfvm_status *st;
} accel_parser;

static pfvm_code accel_bad(accel_parser *p, const char *what, const char *tok)
{
    return pfvm__fail(p->st, PFVM_ERR_PARSE, "%s:%d: %s%s%s%s", p->source, p->line, what, tok ? " '" : "",
                      tok ? tok : "", tok ? "'" : "");
}

static pfvm_code accel_split(accel_parser *p, const char *s, size_t len, accel_line *l)
{
    size_t i;
    char *c;
    if (len >= sizeof l->buf)
        return accel_bad(p, "line longer than 511 characters", NULL);
    memcpy(l->buf, s, len);
    l->buf[len] = 0;
    if ((c = strchr(l->buf, '#')) != NULL)
        *c = 0;
    l->n = 0;
    for (i = 0; l->buf[i];) {
        while (l->buf[i] == ' ' || l->buf[i] == '\t' || l->buf[i] == '\r')
            l->buf[i++] = 0;
        if (!l->buf[i])
            break;
        if (l->n == ACCEL_MAX_TOKENS)
            return accel_bad(p, "more than 32 words on a line", NULL);
        l->tok[l->n++] = l->buf + i;
        while (l->buf[i] && l->buf[i] != ' ' && l->buf[i] != '\t' && l->buf[i] != '\r')
            i++;
    }
    return PFVM_OK;
}

/* A non-negative integer with an optional K/M/G suffix (powers of 1024). */
static int accel_bytes(const char *s, int64_t *out)
{
    char *end;
    double v;
    int64_t mul = 1;
    if (!*s || *s == '-' || *s == '+')
        return 0;
    v = strtod(s, &end);
    if (end == s)
        return 0;
    if (*end == 'K' || *end == 'M' || *end == 'G') {
        mul = *end == 'K' ? 1024 : *end == 'M' ? 1024 * 1024 : (int64_t)1024 * 1024 * 1024;
        end++;
    }
    if (*end || v < 0 || v * (double)mul > 9e18 || v * (double)mul != (double)(int64_t)(v * (double)mul))
        return 0;
    *out = (int64_t)(v * (double)mul);
    return 1;
}

static int accel_number(const char *s, double *out)
{
    char *end;
    if (!*s || *s == '-' || *s == '+')
        return 0;
    *out = strtod(s, &end);
    return !*end && *out >= 0 && *out < 1e15;
}

static int accel_name_ok(const char *s)
{
    size_t i, n = strlen(s);
    if (n == 0 || n >= PFVM_ACCEL_NAME)
        return 0;
    for (i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (i && c >= '0' && c <= '9')))
            return 0;
    }
    return 1;
}

static pfvm_code accel_parse_level(accel_parser *p, const accel_line *l, pfvm_accel_target *t)
{
    pfvm_accel_level *lv;
    int i, seen_fanout = 0, seen_mem = 0, seen_down = 0, seen_up = 0;
    if (t->nlevels == PFVM_ACCEL_MAX_LEVELS)
        return accel_bad(p, "more than 8 levels", NULL);
    if (t->nmacs || t->simd)
        return accel_bad(p, "level after the pe line (the pe line describes the last level)", NULL);
    if (l->n < 2 || !accel_name_ok(l->tok[1]))
        return accel_bad(p, "level needs a name (letters, digits, '_'; at most 31)", l->n < 2 ? NULL : l->tok[1]);
    if (!strcmp(l->tok[1], "local") || pfvm_accel_target_level(t, l->tok[1]) >= 0)
        return accel_bad(p, !strcmp(l->tok[1], "local") ? "'local' is reserved, not a level name"
                                                         : "duplicate level name",
                         l->tok[1]);
    lv = &t->levels[t->nlevels];
    memset(lv, 0, sizeof *lv);
    strcpy(lv->name, l->tok[1]);
    for (i = 2; i < l->n; i++) {
        const char *k = l->tok[i];
        if (!strcmp(k, "broadcast")) {
            lv->broadcast = 1;
            continue;
        }
        if (!strcmp(k, "reduce")) {
            lv->reduce = 1;
            continue;
        }
        if (i + 1 >= l->n)
            return accel_bad(p, "missing value after", k);
        if (!strcmp(k, "fanout")) {
            if (!accel_bytes(l->tok[i + 1], &lv->fanout) || lv->fanout < 1 || lv->fanout > 1 << 20)
                return accel_bad(p, "fanout must be an integer from 1 to 1048576, not", l->tok[i + 1]);
            seen_fanout = 1;
        } else if (!strcmp(k, "mem")) {
            if (!accel_bytes(l->tok[i + 1], &lv->mem_bytes))
                return accel_bad(p, "mem must be a byte count (suffix K, M or G), not", l->tok[i + 1]);
            seen_mem = 1;
        } else if (!strcmp(k, "down") || !strcmp(k, "up")) {
            double *v = !strcmp(k, "down") ? &lv->down : &lv->up;
            if (!accel_number(l->tok[i + 1], v))
                return accel_bad(p, "bytes per cycle must be a non-negative number, not", l->tok[i + 1]);
            *(k[0] == 'd' ? &seen_down : &seen_up) = 1;
        } else {
            return accel_bad(p, "unknown level key (fanout, mem, down, up, broadcast, reduce)", k);
        }
        i++;
    }
    if (!seen_fanout || !seen_mem)
        return accel_bad(p, !seen_fanout ? "level without fanout" : "level without mem", lv->name);
    if (t->nlevels == 0 && lv->fanout != 1)
        return accel_bad(p, "the first (root) level must have fanout 1", lv->name);
    if (t->nlevels > 0 && (!seen_down || !seen_up || lv->down <= 0 || lv->up <= 0))
        return accel_bad(p, "a level below the root needs down and up bandwidths above 0", lv->name);
    t->nlevels++;
    return PFVM_OK;
}

static pfvm_code accel_parse_pe(accel_parser *p, const accel_line *l, pfvm_accel_target *t)
{
    int i;
    if (t->simd)
        return accel_bad(p, "second pe line", NULL);
    if (t->nlevels < 2)
        return accel_bad(p, "pe line before two levels (a root and the PE level)", NULL);
    for (i = 1; i < l->n; i += 2) {
        const char *k = l->tok[i];
        if (!strcmp(k, "simd")) {
            int64_t w;
            if (i + 1 >= l->n || !accel_bytes(l->tok[i + 1], &w) || w < 1 || w > 4096)
                return accel_bad(p, "simd must be an integer from 1 to 4096", i + 1 < l->n ? l->tok[i + 1] : NULL);
            t->simd = (int)w;
        } else if (!strcmp(k, "mac")) {
            pfvm_dtype d;
            int j;
            if (i + 2 >= l->n)
                return accel_bad(p, "mac needs a dtype and a rate", NULL);
            d = pfvm_dtype_from_name(l->tok[i + 1]);
            if (d == PFVM_UNDEFINED)
                return accel_bad(p, "unknown dtype", l->tok[i + 1]);
            for (j = 0; j < t->nmacs; j++)
                if (t->mac_dtype[j] == d)
                    return accel_bad(p, "second mac rate for", l->tok[i + 1]);
            if (t->nmacs == PFVM_ACCEL_MAX_MACS)
                return accel_bad(p, "more than 8 mac rates", NULL);
            if (!accel_number(l->tok[i + 2], &t->macs[t->nmacs]) || t->macs[t->nmacs] <= 0)
                return accel_bad(p, "mac rate must be a number above 0, not", l->tok[i + 2]);
            t->mac_dtype[t->nmacs++] = d;
            i++;
        } else {
            return accel_bad(p, "unknown pe key (simd, mac)", k);
        }
    }
    if (!t->simd)
        return accel_bad(p, "pe line without simd", NULL);
    if (!t->nmacs)
        return accel_bad(p, "pe line without a mac rate", NULL);
    if (t->levels[t->nlevels - 1].mem_bytes <= 0)
        return accel_bad(p, "the PE level (the last) needs mem above 0", t->levels[t->nlevels - 1].name);
    return PFVM_OK;
}

static pfvm_code accel_parse_line(accel_parser *p, const accel_line *l, pfvm_accel_target *t)
{
    const char *k = l->tok[0];
    if (!strcmp(k, "target")) {
        if (t->name[0])
            return accel_bad(p, "second target line", NULL);
        if (l->n != 2 || !accel_name_ok(l->tok[1]))
            return accel_bad(p, "target needs one name (letters, digits, '_'; at most 31)", NULL);
        strcpy(t->name, l->tok[1]);
        return PFVM_OK;
    }
    if (!t->name[0])
        return accel_bad(p, "the first line must be 'target NAME', not", k);
    if (!strcmp(k, "level"))
        return accel_parse_level(p, l, t);
    if (!strcmp(k, "pe"))
        return accel_parse_pe(p, l, t);
    return accel_bad(p, "unknown directive (target, level, pe)", k);
}

pfvm_code pfvm_accel_target_parse(const char *text, const char *source, pfvm_accel_target *t, pfvm_status *st)
{
    accel_parser p;
    accel_line l;
    const char *s = text;
    pfvm_code rc;
    memset(t, 0, sizeof *t);
    p.source = source ? source : "target";
    p.line = 0;
    p.st = st;
    if (!text)
        return pfvm__fail(st, PFVM_ERR_INVALID, "%s: no text", p.source);
    while (*s) {
        const char *e = strchr(s, '\n');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        p.line++;
        if ((rc = accel_split(&p, s, len, &l)) != PFVM_OK)
            return rc;
        if (l.n && (rc = accel_parse_line(&p, &l, t)) != PFVM_OK)
            return rc;
        s += len + (e != NULL);
    }
    if (!t->simd)
        return accel_bad(&p, !t->name[0] ? "empty target (no 'target NAME' line)" : "missing pe line at the end",
                         NULL);
    pfvm__ok(st);
    return PFVM_OK;
}

#ifndef PFVM_NO_STDIO
pfvm_code pfvm_accel_target_load(const char *path, pfvm_accel_target *t, pfvm_status *st)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;
    pfvm_code rc;
    if (!f)
        return pfvm__fail(st, PFVM_ERR_IO, "%s: cannot open", path);
    if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || n > (1 << 20) || fseek(f, 0, SEEK_SET)) {
        fclose(f);
        return pfvm__fail(st, PFVM_ERR_IO, "%s: cannot read (or larger than 1 MiB)", path);
    }
    buf = (char *)pfvm__malloc((size_t)n + 1);
    if (!buf) {
        fclose(f);
        return pfvm__fail(st, PFVM_ERR_NOMEM, "%s: out of memory", path);
    }
    if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
        fclose(f);
        pfvm__free(buf);
        return pfvm__fail(st, PFVM_ERR_IO, "%s: cannot read", path);
    }
    fclose(f);
    buf[n] = 0;
    if (memchr(buf, 0, (size_t)n))
        rc = pfvm__fail(st, PFVM_ERR_PARSE, "%s: not a text file (NUL byte)", path);
    else
        rc = pfvm_accel_target_parse(buf, path, t, st);
    pfvm__free(buf);
    return rc;
}
#endif

/* snprintf into the remainder of buf, counting what it would need. */
static void accel_put(char *buf, size_t size, size_t *len, const char *fmt, ...)
{
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = pfvm__vsnprintf(*len < size ? buf + *len : NULL, *len < size ? size - *len : 0, fmt, ap);
    va_end(ap);
    if (n > 0)
        *len += (size_t)n;
}

size_t pfvm_accel_target_format(const pfvm_accel_target *t, char *buf, size_t size)
{
    size_t len = 0;
    int i;
    if (size)
        buf[0] = 0;
    accel_put(buf, size, &len, "target %s\n", t->name);
    for (i = 0; i < t->nlevels; i++) {
        const pfvm_accel_level *l = &t->levels[i];
        accel_put(buf, size, &len, "level %s fanout %lld mem %lld down %.17g up %.17g%s%s\n", l->name,
                  (long long)l->fanout, (long long)l->mem_bytes, l->down, l->up, l->broadcast ? " broadcast" : "",
                  l->reduce ? " reduce" : "");
    }
    accel_put(buf, size, &len, "pe simd %d", t->simd);
    for (i = 0; i < t->nmacs; i++)
        accel_put(buf, size, &len, " mac %s %.17g", pfvm_dtype_name(t->mac_dtype[i]), t->macs[i]);
    accel_put(buf, size, &len, "\n");
    return len;
}

int pfvm_accel_target_level(const pfvm_accel_target *t, const char *name)
{
    int i;
    for (i = 0; i < t->nlevels; i++)
        if (!strcmp(t->levels[i].name, name))
            return i;
    return -1;
}

int64_t pfvm_accel_target_instances(const pfvm_accel_target *t, int level)
{
    int64_t n = 1;
    int i;
    for (i = 0; i <= level && i < t->nlevels; i++)
        n *= t->levels[i].fanout;
    return n;
}

int64_t pfvm_accel_target_pes(const pfvm_accel_target *t)
{
    return pfvm_accel_target_instances(t, t->nlevels - 1);
}

double pfvm_accel_target_macs(const pfvm_accel_target *t, pfvm_dtype dtype)
{
    int i;
    for (i = 0; i < t->nmacs; i++)
        if (t->mac_dtype[i] == dtype)
            return t->macs[i];
    return 0;
}
