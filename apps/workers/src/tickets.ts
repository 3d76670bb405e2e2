/**
 * The pretend help desk the tools read: tickets, services and customers, all computed from a
 * ticket's number, so every worker process sees the same world without sharing anything.
 */

/** The services a ticket can be about. */
export const SERVICES = ["checkout", "search", "login", "payments"] as const;

/** A service of {@link SERVICES}. */
export type Service = (typeof SERVICES)[number];

const COMPLAINTS: Readonly<Record<Service, string>> = {
  checkout: "the checkout page spins forever",
  search: "search finds nothing for 'blue shoes'",
  login: "I cannot log in since this morning",
  payments: "my card was charged twice",
};

const STATUS: Readonly<Record<Service, string>> = {
  checkout: "degraded: p95 latency 4.2 s, error rate 3.1 %",
  search: "healthy: p95 latency 120 ms, error rate 0.0 %",
  login: "degraded: error rate 12 % since 07:40",
  payments: "healthy: p95 latency 300 ms, error rate 0.1 %",
};

const PLANS = ["free", "pro", "enterprise"] as const;

/** What `read_ticket` says about ticket `ticket`. */
export function describeTicket(ticket: number): string {
  const service = serviceOf(ticket);
  return `Ticket ${ticket} from customer ${customerOf(ticket)} about ${service}: "${COMPLAINTS[service]}".`;
}

/** What `check_service` says about a service. */
export function describeService(service: Service): string {
  return `${service} is ${STATUS[service]}.`;
}

/** What `lookup_customer` says about a customer. */
export function describeCustomer(customer: number): string {
  return `Customer ${customer} is on the ${PLANS[customer % PLANS.length]} plan.`;
}

/** The service ticket `ticket` is about. */
export function serviceOf(ticket: number): Service {
  return SERVICES[ticket % SERVICES.length]!;
}

/** The customer who wrote ticket `ticket`. */
export function customerOf(ticket: number): number {
  return 1000 + ticket;
}

/** The ticket a prompt names ("triage ticket 7" → 7), or `undefined`. */
export function ticketOf(prompt: string): number | undefined {
  const match = /\bticket\s+#?(\d+)\b/i.exec(prompt);
  return match === null ? undefined : Number(match[1]);
}
