import { bootstrapHost, exitOnStartupFailure } from './bootstrap';

bootstrapHost({ env: process.env }).catch(exitOnStartupFailure);
