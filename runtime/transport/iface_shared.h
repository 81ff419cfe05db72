/* transport/iface_shared.h - the IPv4 addresses that more than one host
 * of a job has (a bridge such as docker0 or virbr0 with the same address
 * on every node): a transport that dials them reaches its own host. Each
 * rank lists its addresses, the lists are exchanged, and this host's
 * interfaces that hold a shared one are named for the transport to leave
 * out (comm_mpi.c: Open MPI's TCP BTL, whose CIDR form a.b.c.d/32 also
 * matches every other interface: Open MPI 4.1.4, measured).
 * What this does not do: the exchange, or judge an address that is
 * unique but unroutable.
 */
#ifndef HVD_IFACE_SHARED_H
#define HVD_IFACE_SHARED_H

#include <stddef.h>

/* One rank's row of the exchange; both strings NUL-terminated. */
struct iface_row {
	char host[64];
	char addrs[256];   /* "a.b.c.d,..." */
};

/* holding NULL: this host's IPv4 addresses on interfaces that are up,
 * loopback left out, as "a.b.c.d,..."; else the names of those whose
 * address the list `holding` ("a.b.c.d,...") holds: "docker0,...". Those
 * that fit in out. */
void iface_walk(const char *holding, char *out, size_t len);

/* The addresses that rows of two or more different hosts list, as
 * "a.b.c.d,..." (each once, in first-seen order); returns how many
 * (those that fit in out). */
int iface_shared(const struct iface_row *rows, int n, char *out, size_t len);

#endif
