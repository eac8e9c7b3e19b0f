/* The soname "libcrypto.so" over the real libcrypto.so.3, for civetweb's
 * run-time loading (see ssl_names.c). Nothing of its own. */
