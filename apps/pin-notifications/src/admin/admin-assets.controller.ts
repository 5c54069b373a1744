import { Controller, Get, NotFoundException, Param, Res } from '@nestjs/common';
import { dirname, join } from 'node:path';
import type { Response } from 'express';

/** The console's static files: the kept libraries from node_modules, the console's own from assets/. */
const ASSETS: Readonly<Record<string, { readonly file: () => string; readonly type: string }>> = {
  'pico.css': {
    file: () => fromPackage('@picocss/pico', 'css/pico.classless.min.css'),
    type: 'text/css',
  },
  'htmx.js': { file: () => fromPackage('htmx.org', 'dist/htmx.min.js'), type: 'text/javascript' },
  'uplot.js': {
    file: () => fromPackage('uplot', 'dist/uPlot.iife.min.js'),
    type: 'text/javascript',
  },
  'uplot.css': { file: () => fromPackage('uplot', 'dist/uPlot.min.css'), type: 'text/css' },
  'console.css': { file: () => join(__dirname, 'assets', 'console.css'), type: 'text/css' },
  'console.js': { file: () => join(__dirname, 'assets', 'console.js'), type: 'text/javascript' },
};

function fromPackage(name: string, path: string): string {
  return join(dirname(require.resolve(`${name}/package.json`)), path);
}

/**
 * Served from this app, never a CDN: the console works offline and no other
 * origin is trusted with its scripts. Public like any library file (the login
 * page needs its stylesheet); a fixed list, so no path reaches the disk from a
 * request.
 */
@Controller('admin/assets')
export class AdminAssetsController {
  @Get(':name')
  asset(@Param('name') name: string, @Res() response: Response): void {
    const asset = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined;
    if (!asset) throw new NotFoundException();
    response.type(asset.type).setHeader('Cache-Control', 'public, max-age=3600');
    response.sendFile(asset.file());
  }
}
