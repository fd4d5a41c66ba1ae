import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { createTestDatabase, onPostgres, type TestDatabase } from '../helpers/database.ts';
import { type PgProxy, startPgProxy } from '../helpers/pg-proxy.ts';

// The soak cuts the database away at the TCP proxy (test/helpers/pg-proxy.ts, cutAll) and judges
// the service by what its clients saw meanwhile; a cut that let statements through would prove
// nothing. Pinned here on PostgreSQL: `reset` ends the open connections and refuses new ones,
// `silent` answers nothing until restore() closes every connection it held; after either, new
// connections work again.

const connect = async (url: string) => {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined);
  await client.connect();
  return client;
};

describe('the pg proxy cuts the database away (soak)', { skip: !onPostgres() && 'PostgreSQL only' }, () => {
  let database: TestDatabase;
  let proxy: PgProxy;
  before(async () => {
    database = await createTestDatabase();
    const target = database.target;
    assert.ok(target.kind === 'postgres');
    proxy = await startPgProxy(target.url);
  });
  after(async () => {
    await proxy?.close();
    await database?.drop();
  });

  it('reset: the open connection fails, a new one is refused, and after restore one works', async () => {
    const open = await connect(proxy.url);
    assert.equal((await open.query('select 1 as one')).rows[0].one, 1);
    const cut = proxy.cutAll('reset');
    await assert.rejects(open.query('select 1'));
    await assert.rejects(connect(proxy.url));
    cut.restore();
    const again = await connect(proxy.url);
    assert.equal((await again.query('select 2 as two')).rows[0].two, 2);
    await again.end();
  });

  it('silent: a statement gets no answer until restore() closes its connection', async () => {
    const open = await connect(proxy.url);
    const cut = proxy.cutAll('silent');
    let settled = false;
    const pending = open.query('select 3').finally(() => {
      settled = true;
    });
    // Whatever PostgreSQL would have answered, it is not passed on while the cut lasts.
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(settled, false, 'no answer passes while silent');
    cut.restore();
    await assert.rejects(pending);
    const again = await connect(proxy.url);
    assert.equal((await again.query('select 4 as four')).rows[0].four, 4);
    await again.end();
  });
});
