/* gl_listener.c - finds what would hang hwloc's GL probe (gl_listener.h):
 * the GL component is present when hwloc accepts it as a name to leave
 * out; listeners come from /proc/net/tcp and tcp6 (state 0A), so nothing
 * connects to the service that listens.
 * What it does not do: probe X or load a topology.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <hwloc.h>

#include "gl_listener.h"

#define X_PORT_FIRST 6000
#define X_DISPLAYS 10

static int hwloc_has_gl(void)
{
	hwloc_topology_t t;
	if (hwloc_topology_init(&t) != 0)
		return 0;
	int has = hwloc_topology_set_components(t, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST,
						"gl") == 0;
	hwloc_topology_destroy(t);
	return has;
}

/* Marks listen[d] for every display d whose port has a listener in FILE. */
static void scan_listeners(const char *file, int listen[X_DISPLAYS])
{
	char line[512], local[64];
	unsigned port, state;
	FILE *f = fopen(file, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *colon;
		if (sscanf(line, " %*d: %63s %*s %x", local, &state) != 2 ||
		    !(colon = strrchr(local, ':')) || sscanf(colon + 1, "%x", &port) != 1)
			continue;
		if (state == 0x0A && port >= X_PORT_FIRST && port < X_PORT_FIRST + X_DISPLAYS)
			listen[port - X_PORT_FIRST] = 1;
	}
	fclose(f);
}

int check_gl_listener(void)
{
	int listen[X_DISPLAYS] = { 0 };
	if (!hwloc_has_gl())
		return 0;
	scan_listeners("/proc/net/tcp", listen);
	scan_listeners("/proc/net/tcp6", listen);
	for (int d = 0; d < X_DISPLAYS; d++) {
		char x_socket[32];
		snprintf(x_socket, sizeof(x_socket), "/tmp/.X11-unix/X%d", d);
		if (listen[d] && access(x_socket, F_OK) != 0)
			return X_PORT_FIRST + d;
	}
	return 0;
}
