/* SHA-256 (FIPS 180-2 examples) and HMAC-SHA-256 against RFC 4231's test cases. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "core/hmac.h"

#include <stdio.h>
#include <string.h>

static void hex(const unsigned char *b, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++) sprintf(out + 2 * i, "%02x", b[i]);
}

static void unhex(const char *s, unsigned char *out, size_t *n)
{
    *n = strlen(s) / 2;
    for (size_t i = 0; i < *n; i++) {
        unsigned v;
        sscanf(s + 2 * i, "%2x", &v);
        out[i] = (unsigned char)v;
    }
}

static void expect_sha(const char *msg, const char *want)
{
    coll__sha256 s;
    unsigned char d[COLL_SHA256_LEN];
    char got[65];
    coll__sha256_init(&s);
    coll__sha256_update(&s, msg, strlen(msg));
    coll__sha256_final(&s, d);
    hex(d, sizeof d, got);
    assert_string_equal(got, want);
}

static void test_sha256(void **state)
{
    (void)state;
    expect_sha("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect_sha("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect_sha("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
               "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

/* key and data in hex, as RFC 4231 gives them */
static void expect_hmac(const char *key_hex, const char *data_hex, const char *want)
{
    unsigned char key[200], data[200], mac[COLL_SHA256_LEN];
    size_t kl, dl;
    char got[65];
    unhex(key_hex, key, &kl);
    unhex(data_hex, data, &dl);
    const void *parts[4] = {data, NULL, NULL, NULL};
    size_t lens[4] = {dl, 0, 0, 0};
    coll__hmac_sha256(key, kl, parts, lens, mac);
    hex(mac, sizeof mac, got);
    assert_string_equal(got, want);
    /* The same bytes split into parts give the same MAC. */
    if (dl >= 3) {
        const void *split[4] = {data, data + 1, NULL, data + 2};
        size_t slens[4] = {1, 1, 0, dl - 2};
        coll__hmac_sha256(key, kl, split, slens, mac);
        hex(mac, sizeof mac, got);
        assert_string_equal(got, want);
    }
}

static void test_rfc4231(void **state)
{
    (void)state;
    char k131[263];
    memset(k131, 'a', 262); /* 131 bytes of 0xaa */
    k131[262] = '\0';
    /* 1 */
    expect_hmac("0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", "4869205468657265",
                "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
    /* 2 */
    expect_hmac("4a656665", "7768617420646f2079612077616e7420666f72206e6f7468696e673f",
                "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    /* 3 */
    expect_hmac("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
                "dddddddddddddddddd",
                "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
    /* 4 */
    expect_hmac("0102030405060708090a0b0c0d0e0f10111213141516171819",
                "cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd"
                "cdcdcdcdcdcdcdcdcd",
                "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");
    /* 6: a key longer than the block, hashed first */
    expect_hmac(k131,
                "54657374205573696e67204c6172676572205468616e20426c6f636b2d53697a65204b6579202d2048"
                "617368204b6579204669727374",
                "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
    /* 7 */
    expect_hmac(k131,
                "5468697320697320612074657374207573696e672061206c6172676572207468616e20626c6f636b2d"
                "73697a65206b657920616e642061206c6172676572207468616e20626c6f636b2d73697a6520646174"
                "612e20546865206b6579206e6565647320746f20626520686173686564206265666f7265206265696e"
                "6720757365642062792074686520484d414320616c676f726974686d2e",
                "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
}

static void test_nonces_differ(void **state)
{
    (void)state;
    unsigned char a[COLL_NONCE_LEN], b[COLL_NONCE_LEN];
    assert_int_equal(coll__nonce(a), 0);
    assert_int_equal(coll__nonce(b), 0);
    assert_memory_not_equal(a, b, COLL_NONCE_LEN);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha256),
        cmocka_unit_test(test_rfc4231),
        cmocka_unit_test(test_nonces_differ),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
