"""Classes without accounts: a teacher creates a class, learners join it with a display name, and every answer,
attempt, opened hint and training run is kept under the learner's token. A learner alone gets a token too, so
progress survives a reload without any class.

One SQLite file in the run store's folder (RNNLAB_RUNS_DIR), in WAL mode, so several web processes and restarts
share it (db: the schema's migrations, connections, writes that wait out another's). records: learners, joining
and their answers; teacher: the class as its teacher sees and runs it; summary: the numbers the teacher's view
states (scores out of what was assigned, each exercise's overview, the gradebook, a sweep's points), computed
from the records and nothing else. Tokens are unguessable (secrets), checked by their shape before any query, never
become paths, and never travel in an address: a learner moves to another device by typing their resume code
(resume). Nothing here imports streamlit; every public function raises ValueError with a message a learner
understands.
"""
from core.classroom.db import DB_NAME, MIGRATIONS, connect, database, migrate, write
from core.classroom.records import (NAME_MAX, RESTORE, ClassInfo, Learner, attempts, check_name, class_by_code,
                                    class_by_teacher, create_class, first_attempts, fold, hints, is_token, join, learner,
                                    learner_alone, normal_code, progress, record_attempt, record_hint, record_opened)
from core.classroom import faults, resume, summary, sweep
from core.classroom.faults import StorageFault
from core.classroom.limits import MOST_EPOCHS, Limits, class_limits, set_limits
from core.classroom.resume import by_resume, class_resume_codes, new_resume_code, resume_code
from core.classroom.teacher import (ClassRun, assign, assigned, class_attempts, class_hints, class_opened, class_runs,
                                    hand_out, keep_history, record_run, remove, rename, reset, roster, set_open,
                                    version)

__all__ = [
    'faults', 'resume', 'summary', 'sweep', 'StorageFault', 'MOST_EPOCHS', 'Limits', 'class_limits', 'set_limits',
    'DB_NAME', 'MIGRATIONS', 'connect', 'database', 'migrate', 'write', 'NAME_MAX', 'RESTORE', 'ClassInfo',
    'Learner', 'attempts', 'check_name', 'class_by_code', 'class_by_teacher', 'create_class', 'first_attempts', 'fold',
    'hints', 'is_token', 'join', 'learner', 'learner_alone', 'normal_code', 'progress', 'record_attempt',
    'record_hint', 'record_opened', 'ClassRun', 'assign', 'assigned', 'class_attempts', 'class_hints',
    'class_opened', 'class_runs', 'hand_out', 'keep_history', 'record_run', 'remove', 'rename', 'reset', 'roster',
    'set_open', 'version', 'by_resume', 'class_resume_codes', 'new_resume_code', 'resume_code',
]
