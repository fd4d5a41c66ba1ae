import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { asBody, emailPattern, nonBlank, refuse, routeOptions, text } from './requests.ts';
import { customerFor, type PaymentsSimulator } from './simulator.ts';
import { customerJson } from './wire.ts';

// Paystack's Create Customer: one customer per email (case-insensitive); POST /customer again with the
// same email returns it, updated with the names and phone sent.

export function registerCustomerRoutes(api: FastifyInstance, sim: PaymentsSimulator): void {
  api.post('/customer', routeOptions, async (request, reply) => createCustomer(sim, request, reply));
}

function createCustomer(sim: PaymentsSimulator, request: FastifyRequest, reply: FastifyReply) {
  const body = asBody(request.body);
  const email = text(body.email)?.trim();
  if (email === undefined || !emailPattern.test(email))
    return refuse(reply, 400, 'Invalid Email Address Passed');
  const names = {
    firstName: nonBlank(body.first_name),
    lastName: nonBlank(body.last_name),
    phone: nonBlank(body.phone),
  };
  return { status: true, message: 'Customer created', data: customerJson(customerFor(sim, email, names)) };
}
