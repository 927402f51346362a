# The paper digest service in a container: `docker build -t paper-digest .` then
#   docker run -d -p 3000:3000 -v digest-data:/data --env-file .env paper-digest
# The image runs `digest serve` as PID 1 (no npm or shell in between): `docker stop` sends SIGTERM to it
# and it finishes the sends in flight. NODE_ENV=production: start-up stops unless SMTP_URL is set.
# Check a configuration first: docker run --rm --env-file .env paper-digest node bin/digest.js doctor
FROM node:22-bookworm-slim AS build
# better-sqlite3 compiles from source when no prebuilt binary fits.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY . .
# npm ci runs `prepare` (npm run build: dist/ and the compiled templates), then the dev tools go.
RUN npm ci && npm prune --omit=dev

FROM node:22-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATABASE_PATH=/data/digest.sqlite
WORKDIR /app
COPY --from=build /app /app
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=5s CMD node -e "fetch('http://127.0.0.1:'+process.env.PORT+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
STOPSIGNAL SIGTERM
CMD ["node", "bin/digest.js", "serve"]
