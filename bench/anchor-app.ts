import Fastify from 'fastify';

// The bench's HTTP anchor (bench/fastify-anchor.ts runs it as a child process): Fastify on the same
// Node with one JSON route and nothing else: no database, no auth, no logging, no plugins. What
// the service does per request is measured against what this process does for free.

const app = Fastify({ logger: false });
app.get('/', async () => ({ success: true, data: { balance: 0, currency: 'NGN' } }));

const address = await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`${JSON.stringify({ listening: address })}\n`);
process.once('SIGTERM', () => {
  void app.close().then(() => process.exit(0));
});
