/* Debian 12's civetweb (1.15) loads OpenSSL at run time by the unversioned
 * names "libssl.so" and "libcrypto.so" (present only with libssl-dev) and
 * looks up SSL_get_peer_certificate, which OpenSSL 3 no longer exports (it
 * became a macro for SSL_get1_peer_certificate; civetweb issue #1334): every
 * TLS connection then calls a null pointer. lockscope loads this library,
 * whose soname is "libssl.so", before the server starts, so civetweb's
 * dlopen finds it already loaded: its dependencies are the real libssl.so.3
 * and libcrypto.so.3, and it adds the one missing name. */
#include <openssl/ssl.h>

#undef SSL_get_peer_certificate
X509 *SSL_get_peer_certificate(const SSL *ssl);

X509 *SSL_get_peer_certificate(const SSL *ssl)
{
	return SSL_get1_peer_certificate(ssl);
}
