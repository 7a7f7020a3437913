/** The first-run guide in Chromium on the file backend (see first-run.ts). */
import { firstRunSuite } from './first-run.js';

firstRunSuite('file');
