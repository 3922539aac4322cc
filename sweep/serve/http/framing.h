/*
 * framing.h — which answers of `sweep serve` end a connection.
 *
 * A 400 (a request line or head httplib could not parse, or a field it refused), 408 (a head cut
 * short), 411 (a chunked body), 413 (a body past the limit), 414 (a request line past httplib's
 * limit) or 431 (a head past the limit) says the server could not tell where that request ended:
 * whatever bytes follow may be the rest of it, so none of them is read as a next request. The
 * connection is closed after the answer (lingering first, connection_gate.h).
 */
#pragma once

namespace sweep::serve::http {

constexpr bool ends_framing_trust(int status) {
  return status == 400 || status == 408 || status == 411 || status == 413 || status == 414 ||
         status == 431;
}

}  // namespace sweep::serve::http
