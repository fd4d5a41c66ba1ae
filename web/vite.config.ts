import tailwindcss from '@tailwindcss/vite';
import { tanstackRouter } from '@tanstack/router-plugin/vite';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';
import { VitePWA } from 'vite-plugin-pwa';

// The web client's build (web/README.md). File routes under src/routes, one chunk per route; the
// service worker is our own (src/sw.ts: precache, offline shell, Web Push), its manifest injected.
// `npm run web:dev` serves it with hot reload and sends the API to the service on :3000.

const service = process.env.BILLRAIL_URL ?? 'http://127.0.0.1:3000';

export default defineConfig({
  root: import.meta.dirname,
  plugins: [
    tanstackRouter({ target: 'react', autoCodeSplitting: true }),
    react(),
    tailwindcss(),
    VitePWA({
      strategies: 'injectManifest',
      srcDir: 'src',
      filename: 'sw.ts',
      injectRegister: false,
      manifest: {
        name: 'billrail',
        short_name: 'billrail',
        description: 'Airtime, data, bills and savings from your wallet',
        theme_color: '#0f5132',
        background_color: '#ffffff',
        display: 'standalone',
        start_url: '/',
        icons: [
          { src: '/icon-192.png', sizes: '192x192', type: 'image/png' },
          { src: '/icon-512.png', sizes: '512x512', type: 'image/png' },
          { src: '/icon-512.png', sizes: '512x512', type: 'image/png', purpose: 'maskable' },
        ],
      },
      injectManifest: { globPatterns: ['**/*.{js,css,html,png,svg,webmanifest}'] },
    }),
  ],
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: false },
  server: {
    proxy: Object.fromEntries(
      ['/_serverFn', '/openapi.json', '/__sandbox', '/api', '/kyc'].map((path) => [path, service]),
    ),
  },
});
