"""The instructor's grading: a batch of files (batch, collect, names), rosters and LMS names, shards and
their merge, exports (export, export_folder, lms_export), deadlines, overrides and similarity."""
