# syntax=docker/dockerfile:1
# Sluice collector image: `docker build -t sluice .`
# Runtime: Node 20 on Alpine, production dependencies, compiled JS and the built console only, user `node`.

# ---- build: compile TypeScript, then keep production dependencies only ----
FROM node:20-alpine AS build
WORKDIR /app
# better-sqlite3 compiles from source when no prebuilt binary matches musl.
RUN apk add --no-cache python3 make g++
COPY package.json package-lock.json ./
# --ignore-scripts: the package's `prepare` (build on install) needs src/, copied below; the
# one native dependency is then built on its own.
RUN npm ci --no-audit --no-fund --ignore-scripts && npm rebuild better-sqlite3
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY tools ./tools
# .dockerignore keeps test/ out of the context, so this compiles src/ and tools/ only; then the
# web console is bundled into dist/console (esbuild, a devDependency, before the prune).
RUN npx tsc -p tsconfig.build.json \
  && node dist/tools/build-console.js \
  && npm prune --omit=dev --no-audit --no-fund

# ---- runtime ----
FROM node:20-alpine
# The V8 memory flags of src/runtime/memory-flags.ts (a unit test keeps them equal): a bounded old
# generation and a small young generation (short GC pauses). `docker run -e NODE_OPTIONS=...`
# replaces them; a NODE_OPTIONS without them makes `sluice serve` relaunch itself with them. Node
# refuses --initial-old-space-size in NODE_OPTIONS: it is on the ENTRYPOINT's command line.
ENV NODE_ENV=production \
    NODE_OPTIONS="--max-old-space-size=512 --max-semi-space-size=8" \
    SLUICE_HOST=0.0.0.0 \
    SLUICE_PORT=8080
WORKDIR /app
COPY --from=build --chown=root:root /app/package.json ./package.json
COPY --from=build --chown=root:root /app/node_modules ./node_modules
COPY --from=build --chown=root:root /app/dist/src ./dist/src
COPY --from=build --chown=root:root /app/dist/console ./dist/console
# Tier 1 (no SLUICE_DATABASE_URL) writes its SQLite file under ./data: the only writable folder.
RUN mkdir -p /app/data && chown node:node /app/data
USER node
EXPOSE 8080
# Liveness only (/livez): readiness (/readyz) is HAProxy's business, and a container must not
# be restarted merely because PostgreSQL is away. Node's fetch: no curl in the image.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.SLUICE_PORT||8080)+'/livez').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# SIGTERM starts the drain (readiness 503, drain delay, close, flush); node is PID 1 and handles it.
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "--initial-old-space-size=64", "dist/src/cli.js"]
CMD ["serve"]
