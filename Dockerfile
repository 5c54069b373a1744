# syntax=docker/dockerfile:1

# Build: the whole toolchain, to compile the app and the library to dist/.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --omit=optional leaves out the embedded PostgreSQL binaries (~60 MB): the image always has DATABASE_URL.
RUN npm ci --omit=optional
COPY . .
RUN npm run build

# Runtime: production dependencies and the compiled output only.
FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --omit=optional && npm cache clean --force
COPY --from=build /app/dist ./dist
USER node
EXPOSE 3000
# SIGTERM (docker stop) lets the cycle in flight reach an item boundary before the process exits.
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=15s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "dist/apps/pin-notifications/src/main.js"]
