/** The groups, teams and role-assignment pages in Chromium on the server backend (see groups.ts). */
import { groupsSuite } from './groups.js';

groupsSuite('server');
