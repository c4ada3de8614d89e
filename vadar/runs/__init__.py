"""The run machinery: where a job starts, how its questions are answered, what it writes.

- Starting a job: `session` (the configured LLM, modules, store and progress for one command),
  `prepare` (data sets and module sets ready for a method), `pipeline` (build the API from some
  batches, then answer the rest), `progress` (the live status line).
- Answering questions: `methods` (vadar, static-api, tool-agent, direct behind one interface),
  `evaluation` (questions through an executor, results written as they come), `executors` (in this
  process or on a Ray cluster), `gold_eval` (gold programs through the same modules).
- What a run writes: `results` (one JSONL line per question and the summary), `manifest` (the
  run's identity, for resume), `compare` (runs side by side), `ablation` (module configurations).
"""
