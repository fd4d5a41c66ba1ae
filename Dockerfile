# syntax=docker/dockerfile:1
# The billrail image: one image for every process (API, worker, migrations, the standalone sandbox),
# chosen by the command. Node 24 from the official image: the `node` npm package the repository pins
# is a devDependency, for checkouts, and is not installed here.
ARG NODE_IMAGE=node:24-bookworm-slim

# Everything, dev dependencies included: what the web client is built with (Vite is a dependency of
# the web workspace). --ignore-scripts: the pinned `node` package would download a second Node.js.
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY web/package.json web/
RUN npm ci --ignore-scripts --no-audit --no-fund

# web/dist (npm run build): built once here, so that no container ever builds at start.
FROM deps AS web
COPY src src
COPY web web
RUN node src/web-build-cli.ts

# What runs: production dependencies of the root package alone (--workspaces=false leaves out the web
# workspace's Vite, React and the rest, which live in web/dist once built), the sources and web/dist.
FROM ${NODE_IMAGE} AS runtime
WORKDIR /app
COPY package.json package-lock.json ./
COPY web/package.json web/
RUN npm ci --omit=dev --workspaces=false --ignore-scripts --no-audit --no-fund \
  && npm cache clean --force
COPY src src
COPY --from=web /app/web/dist web/dist
# The code stays root's and read-only to the process; DATA_DIR (identity documents without S3,
# PGlite without DATABASE_URL, sandbox keys) is the one directory it writes.
RUN mkdir -p /app/data && chown node:node /app/data
USER node
# HOST=0.0.0.0 turns the sandbox off by default (config.ts): the image runs the real providers unless
# SANDBOX=1 says otherwise. NODE_ENV is left to the operator: production refuses the sandbox.
ENV HOST=0.0.0.0 PORT=3000 DATA_DIR=/app/data
# V8's heap sizing, as npm start gives it (docs/memory.md): a 32 MB young generation and an old
# generation collected well before 1 GB keep an API process under load near 250 MB instead of 380.
ENV NODE_OPTIONS="--max-semi-space-size=16 --max-old-space-size=1024"
EXPOSE 3000
# /readyz answers 200 while the database answers (src/app.ts). Worker and sandbox containers, which
# serve no such route, turn this off (compose.yaml).
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
STOPSIGNAL SIGTERM
# node as PID 1, never npm: npm does not pass SIGTERM on to the service, whose graceful stop (finish
# requests and jobs in hand, exit 0) main.ts runs on SIGTERM itself.
CMD ["node", "src/main.ts"]
