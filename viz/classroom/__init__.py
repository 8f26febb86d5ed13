"""A live class: the teacher's view, which students' screens follow, and the questions the class answers."""
