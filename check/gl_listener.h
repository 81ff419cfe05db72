/* gl_listener.h - the one hwloc hazard a node can carry unseen: a TCP
 * listener on an X display's port while hwloc's GL component is installed.
 */
#ifndef HVD_CHECK_GL_LISTENER_H
#define HVD_CHECK_GL_LISTENER_H

/* The first port 6000-6009 with a TCP listener (IPv4 or IPv6) whose X
 * display :N has no local socket (/tmp/.X11-unix/XN), when this hwloc has
 * its GL component; 0 otherwise. There hwloc's discovery waits forever
 * unless HWLOC_COMPONENTS=-gl (libhvd sets it for itself; slurmd needs it
 * for Slurm's PMIx server). */
int check_gl_listener(void);

#endif
