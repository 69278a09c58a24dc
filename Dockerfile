# The three services in one image; SERVICES picks what a container runs (see compose.yaml).
#   docker build -t services .                                   (the official Node 24 image)
#   docker build --build-arg NODE_IMAGE=local/node:24 -t services .   (any Debian-based Node 24)
ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# The build needs only what the server needs (esbuild, Vite and React are among them).
RUN npm ci --omit=dev --no-audit --no-fund
COPY server server
COPY migrations migrations
COPY scripts scripts
COPY web web
COPY vite.config.ts tsconfig.json ./
# The server compiled as `npm start` compiles it, and the pages built as the server builds them.
RUN node_modules/.bin/tsx scripts/compile.ts \
 && node --input-type=module -e "await (await import('./dist/server/auth/spa.js')).ensureSpaBuilt()"

FROM ${NODE_IMAGE}
WORKDIR /app
# Fixed ids, named by number in USER: an orchestrator can then tell the user is not root
# (Kubernetes' runAsNonRoot; deploy/kubernetes runs as the same ids).
RUN groupadd --system --gid 10001 app && useradd --system --uid 10001 --gid app --home-dir /app app \
 && mkdir /data && chown app:app /data
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist dist
# The pages ship built, without their sources: the server serves them as they are.
ENV NOTES8080_HOST=0.0.0.0 NOTES8000_HOST=0.0.0.0 AUTH_HOST=0.0.0.0 SPA_MODE=prebuilt DATA_DIR=/data
EXPOSE 8080 8000 3000
USER 10001:10001
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 CMD ["node", "dist/server/healthcheck.js"]
# What `npm start` runs (package.json).
CMD ["node", "dist/server/main.js"]
