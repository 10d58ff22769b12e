/* grpc.h - the OTLP/gRPC profiles listener the server runs beside its HTTP port. */
#ifndef SC_GRPC_H
#define SC_GRPC_H

#include <netinet/in.h>

#include "server/server_int.h"

struct sc_grpc;

/* Listens on sa and serves ProfilesService/Export into srv's store with srv's token,
 * limits and budgets. 0 or SC_EIO / SC_ENOMEM with detail in err. */
int sc_grpc_start(struct sc_server *srv, const struct sockaddr_in *sa, struct sc_grpc **out,
                  char *err);
/* The port it listens on (for :0). */
unsigned sc_grpc_port(const struct sc_grpc *g);
/* Stops accepting, lets connections finish the requests they hold (answered), closes them.
 * NULL is fine. */
void sc_grpc_stop(struct sc_grpc *g);

#endif
